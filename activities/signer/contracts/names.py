"""Every Temporal name of the signer: workflow type, activities, signals and task queues.

The values are in saved histories and running workflows: never change one, add a new name.
"""

from __future__ import annotations

# Workflow tasks are cheap and always polled; signing activities sit on their own queue so
# the pause gate and Pipeline:MaxConcurrency apply to them alone.
JOBS_TASK_QUEUE = "signer-jobs-v1"
SIGNING_TASK_QUEUE = "signer-signing-v1"

# Workflow type.
JOB_WORKFLOW = "signer-job"

# Activities: the signing run (signing queue) and the waits' steps (jobs queue).
PROCESS_JOB_ACTIVITY = "signer-process-job"
APPROVAL_TALLY_ACTIVITY = "signer-approval-tally"
APPROVAL_RELEASE_ACTIVITY = "signer-approval-release"
APPROVAL_REJECT_ACTIVITY = "signer-approval-reject"
APPROVAL_EXPIRE_ACTIVITY = "signer-approval-expire"
APPROVAL_CLEANUP_ACTIVITY = "signer-approval-cleanup"
APPROVAL_NOTIFY_ACTIVITY = "signer-approval-notify"
LACUNA_CHECK_ACTIVITY = "signer-lacuna-check"
LACUNA_FINISH_ACTIVITY = "signer-lacuna-finish"
LACUNA_CANCEL_REMOTE_ACTIVITY = "signer-lacuna-cancel-remote"

# Signals (the job workflow has no updates or queries).
# The API sends it after recording a decision; the workflow re-reads the tally.
APPROVAL_DECIDED_SIGNAL = "signer-approval-decided"
# A Lacuna Signer webhook relayed to the waiting workflow (it only wakes the poll).
WEBHOOK_SIGNAL = "signer-webhook"
