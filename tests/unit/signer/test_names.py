"""The signer's Temporal names come from one contract and keep the values histories hold."""

from __future__ import annotations

from temporalio import activity, workflow

from activities.signer.approvals.activities import ApprovalActivities
from activities.signer.contracts import names
from activities.signer.lacuna.activities import AwaitingSignerActivities
from activities.signer.pipeline import SigningActivities
from workflows.signer.job import SigningJobWorkflow

# Saved histories and running workflows carry these: a change strands them.
PINNED = {
    "JOBS_TASK_QUEUE": "signer-jobs-v1", "SIGNING_TASK_QUEUE": "signer-signing-v1",
    "JOB_WORKFLOW": "signer-job", "PROCESS_JOB_ACTIVITY": "signer-process-job",
    "APPROVAL_TALLY_ACTIVITY": "signer-approval-tally",
    "APPROVAL_RELEASE_ACTIVITY": "signer-approval-release",
    "APPROVAL_REJECT_ACTIVITY": "signer-approval-reject",
    "APPROVAL_EXPIRE_ACTIVITY": "signer-approval-expire",
    "APPROVAL_CLEANUP_ACTIVITY": "signer-approval-cleanup",
    "APPROVAL_NOTIFY_ACTIVITY": "signer-approval-notify",
    "LACUNA_CHECK_ACTIVITY": "signer-lacuna-check",
    "LACUNA_FINISH_ACTIVITY": "signer-lacuna-finish",
    "LACUNA_CANCEL_REMOTE_ACTIVITY": "signer-lacuna-cancel-remote",
    "APPROVAL_DECIDED_SIGNAL": "signer-approval-decided", "WEBHOOK_SIGNAL": "signer-webhook",
}


def test_the_names_keep_their_values():
    declared = {k: v for k, v in vars(names).items() if k.isupper()}
    assert declared == PINNED


def test_the_workflow_and_its_signal_use_the_contract_names():
    definition = workflow._Definition.must_from_class(SigningJobWorkflow)
    assert definition.name == names.JOB_WORKFLOW
    assert set(definition.signals) == {names.APPROVAL_DECIDED_SIGNAL}


def test_every_signer_activity_is_named_in_the_contract():
    contract = {v for k, v in PINNED.items() if k.endswith("_ACTIVITY")}
    defined = {activity._Definition.must_from_callable(member).name
               for cls in (SigningActivities, ApprovalActivities, AwaitingSignerActivities)
               for member in vars(cls).values()
               if activity._Definition.from_callable(member) is not None}
    assert defined == contract
