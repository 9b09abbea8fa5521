"""JSON shapes of the signer's REST answers (camelCase, as the seed shows them)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from activities.signer.operator.health import is_keyless
from activities.signer.operator.jobs import JobDetail
from activities.signer.operator.pipeline_control import PipelineView
from activities.signer.operator.policies import describe_level, describe_policy
from shared.db.models import OperationalEvent, as_utc
from shared.db.signer_models import InputFolderState, Job, SigningProfile


def _ts(moment: datetime | None) -> str | None:
    return as_utc(moment).isoformat() if moment else None


def job_summary(job: Job) -> dict:
    """A row of `GET /api/jobs`."""
    return {
        "id": job.id, "fileName": job.file_name, "status": job.status, "format": job.format,
        "profile": job.profile_name, "folder": job.folder, "source": job.source,
        "errorCode": job.error_code, "error": job.error_message, "parentJobId": job.parent_job_id,
        "createdAt": _ts(job.created_at), "completedAt": _ts(job.completed_at),
    }


def job_detail(detail: JobDetail) -> dict:
    """`GET /api/jobs/{id}`: the row plus timeline, family, timings and output."""
    job = detail.job
    timings = {"queuedAt": _ts(job.created_at), "startedAt": _ts(job.started_at),
               "signingStartedAt": _ts(job.signing_started_at),
               "completedAt": _ts(job.completed_at)}
    if job.completed_at and job.started_at:
        timings["processingSeconds"] = (as_utc(job.completed_at)
                                        - as_utc(job.started_at)).total_seconds()
    return {
        **job_summary(job), "originalPath": job.original_path, "outputPath": job.output_path,
        "inputSize": job.input_size, "inputSha256": job.input_sha256,
        "instance": job.instance_id, "children": detail.children, "timings": timings,
        "history": [{"at": _ts(h.at), "from": h.from_status, "to": h.to_status,
                     "code": h.code, "message": h.message} for h in detail.history],
    }


def pipeline(view: PipelineView) -> dict:
    """`GET /api/pipeline/state`."""
    return {"paused": view.paused, "reason": view.reason, "changedBy": view.changed_by,
            "changedAt": _ts(view.changed_at)}


def profile(row: SigningProfile) -> dict:
    """A profile without any secret (only where the secret comes from)."""
    return {
        "name": row.name, "format": row.format, "certSource": row.cert_source,
        "pfxPath": row.pfx_path, "pfxPasswordEnv": row.pfx_password_env,
        "pkcs11Module": row.pkcs11_module, "pkcs11Thumbprint": row.pkcs11_thumbprint,
        "pkcs11PinEnv": row.pkcs11_pin_env, "verify": row.verify,
        "validateCertificate": row.validate_certificate, "policy": row.policy,
        "policyName": row.policy_name, "policyDocument": row.policy_document,
        "policyDigest": row.policy_digest, "effectivePolicy": describe_policy(row),
        "encrypt": row.encrypt, "enabled": row.enabled, "inputFolder": row.input_folder,
        "development": row.is_dev,
        "approval": row.approval, "checkCnab240PaymentDates": row.check_cnab240_payment_dates,
        # KEYLESS: the approvers sign at the Lacuna Signer; no key is held or opened.
        "method": row.method, "signers": row.signers, "keyless": is_keyless(row),
        # Levels: the TSAs and the cloud credential by address and variable name only.
        "signatureLevel": row.signature_level,
        "effectiveLevel": describe_level(row.signature_level, row.timestamp),
        "timestamp": row.timestamp, "revocationTimeoutSeconds": row.revocation_timeout_seconds,
        "csc": row.csc,
    }


def folder(name: str, path: str, owner: str | None, state: InputFolderState | None) -> dict:
    """A row of `GET /api/folders`."""
    if owner is None:
        status = "Unassigned"
    else:
        status = state.status if state and state.status in ("Running", "Stopped") else "Running"
    return {"name": name, "path": path, "status": status, "profileName": owner,
            "lastError": state.last_error if state else None,
            "lastScanAt": _ts(state.last_scan_at) if state else None}


def event(row: OperationalEvent) -> dict:
    """A row of `GET /api/events`."""
    return {"id": row.id, "at": _ts(row.at), "domain": row.domain, "type": row.type,
            "message": row.message, "actor": row.actor, "properties": row.properties}


def rescan_answer(rows: list) -> dict:
    """Per-folder rows and totals."""
    folders = [asdict(r) for r in rows]
    keys = ("scanned", "enqueued", "ignored", "errors", "alreadyProcessed", "alreadyActive")
    totals = {k: sum(f[k] for f in folders) for k in keys}
    totals["unassigned"] = sum(1 for f in folders if f["unassigned"])
    return {"folders": folders, "totals": totals}
