"""What the SISBAJUD console's forms share: where to go back to, the reason every action
needs, a validation failure as a refusal the page shows."""

from __future__ import annotations

from pydantic import ValidationError
from starlette.datastructures import FormData

from activities.sisbajud.operator import ActionIn
from shared.errors import ErrorCode, EsteiraError

CONSOLE = "/sisbajud"


def back_to(form: FormData, default: str) -> str:
    """The console page the form came from (`back`), never a page elsewhere."""
    back = str(form.get("back") or "")
    inside = back == CONSOLE or back.startswith(CONSOLE + "/") or back.startswith(
        CONSOLE + "?")
    return back if inside and "//" not in back and "\\" not in back else default


def invalid(exc: ValidationError) -> EsteiraError:
    """A form that does not validate, as `request.invalid` with each field's problem."""
    problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return EsteiraError(ErrorCode.REQUEST_INVALID, problems)


def action_of(form: FormData) -> ActionIn:
    """Why the operator acts: required, or `request.invalid` saying so."""
    reason = str(form.get("reason") or "").strip()
    if not reason:
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           "A reason is required: it is recorded with your name.")
    try:
        return ActionIn(reason=reason)
    except ValidationError as exc:
        raise invalid(exc) from exc
