"""Templates on their own: what a job page does with detail it doesn't know yet."""

from __future__ import annotations

from services.dashboard.web import TEMPLATES

JOB = {"id": "j1", "file_name": "remessa.rem", "status": "AwaitingApproval", "format": "Cades",
       "profile_name": "pagamentos", "folder": "remessas", "source": "watcher",
       "error_code": None, "error_message": None, "parent_job_id": None, "created_at": None,
       "started_at": None, "signing_started_at": None, "completed_at": None,
       "original_path": "/in/remessa.rem", "output_path": None, "instance_id": None}
DETAIL: dict[str, object] = {"children": [], "history": [], "processing_seconds": None}


def _render(job: dict, extra: dict | None = None) -> str:
    return TEMPLATES.get_template("job.html").render(
        request=None, job=job, detail=DETAIL, extra=extra or {}, can_cancel=True,
        cancel_effect="", can_retry=False,
        can_delete=True, workflow_id="signer-job:j1", csrf="t", nav=[], path="/jobs/j1",
        flash=None, operator="ana", temporal_link=lambda _request, wid: f"ui/{wid}")


def test_approval_decisions_and_cnab240_lines_render_as_tables_without_code_for_them():
    page = _render(JOB, {"approvals": {
        "quorum": 2, "decisions": [{"approver": "ana@x", "decision": "Approve", "at": "t1"},
                                   {"approver": "<b>bob</b>", "decision": "Reject",
                                    "at": "t2"}]},
        "cnab240": [{"line": 3, "segment": "A", "amount": "1500.00", "payee": "Fornecedor"}]})
    assert '<h2 id="extra-1">approvals</h2>' in page and "quorum" in page
    assert "<th scope=\"col\">approver</th>" in page and "ana@x" in page
    assert "&lt;b&gt;bob&lt;/b&gt;" in page and "<b>bob</b>" not in page, "escaped"
    assert "<th scope=\"col\">segment</th>" in page and "1500.00" in page
    assert 'href="ui/signer-job:j1"' in page


def test_a_job_without_extra_detail_has_no_extra_sections():
    assert 'id="extra-' not in _render(JOB)
