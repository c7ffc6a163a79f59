"""The documents inside IPC files, and parsers that turn bytes into them or into `FieldError`s.

Every parser takes the raw bytes of one file, loads them as strict JSON (the size cap is
`MAX_EVENT_BYTES`), validates the shape with a strict pydantic model, and returns the model or the
complete list of problems. None of them raises, whatever the bytes.
"""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from core.contracts.errors import ROOT, FieldError, preview, sorted_errors
from core.contracts.jsondoc import load_object
from core.contracts.names import run_id_problem
from core.contracts.pydantic_errors import from_validation_error
from core.ipc.files import MAX_EVENT_BYTES
from core.ipc.progress_order import utc_text
from core.workspace import lane_problem

#: The longest progress ``phase``: it is a label, shown in a column.
PHASE_MAX = 64
#: The longest progress ``summary`` and steer ``message``: a paragraph for an operator to read.
TEXT_MAX = 4_000
#: The longest ``steer_id``; the host's are ``steer-`` and 16 hex digits.
STEER_ID_MAX = 128
#: The largest integer the store can keep: SQLite's INTEGER (and PostgreSQL's bigint) is a
#: signed 64-bit value, and a larger one fails the insert, which must never be a file's doing.
STORE_INT_MAX = 2**63 - 1
#: The most tokens one attempt may report, each way: far past any real attempt (a trillion),
#: and small enough that every attempt of a store of any size adds up without overflow.
USAGE_TOKENS_MAX = 10**12
#: The most one attempt may report having cost, in USD.
USAGE_COST_MAX = 10.0**6


def _run_id(value: str) -> str:
    problem = run_id_problem(value)
    if problem:
        raise PydanticCustomError(problem[0], problem[1])
    return value


def _lane(value: str) -> str:
    problem = lane_problem(value)
    if problem:
        raise PydanticCustomError("bad_lane", "{problem}", {"problem": problem})
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty", "must not be blank.")
    return value


def _storable(value: int) -> int:
    if value > STORE_INT_MAX:
        raise PydanticCustomError(
            "out_of_range",
            "must be at most {limit}, the largest integer the store keeps.",
            {"limit": f"{STORE_INT_MAX:,}"},
        )
    return value


def _iso_timestamp(value: str) -> str:
    try:
        utc_text(datetime.fromisoformat(value))
    except ValueError:
        raise PydanticCustomError(
            "bad_format",
            "must be an ISO 8601 timestamp such as 2026-11-22T03:30:00.120Z, not {value}.",
            {"value": preview(value)},
        ) from None
    return value


RunId = Annotated[str, AfterValidator(_run_id)]
Lane = Annotated[str, AfterValidator(_lane)]
Text = Annotated[str, AfterValidator(_not_blank)]
Timestamp = Annotated[str, Field(max_length=64), AfterValidator(_iso_timestamp)]
"""An ISO 8601 timestamp, kept as the writer's text (the store records it as given)."""
SteerId = Annotated[Text, Field(max_length=STEER_ID_MAX)]

_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


class Usage(BaseModel):
    """What the agent has used so far in this attempt (cumulative), where it reports it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)

    tokens_in: Annotated[int, Field(ge=0, le=USAGE_TOKENS_MAX)] = 0
    tokens_out: Annotated[int, Field(ge=0, le=USAGE_TOKENS_MAX)] = 0
    cost_usd: Annotated[float, Field(ge=0, le=USAGE_COST_MAX, allow_inf_nan=False)] = 0.0
    cost_computed: bool = False
    """Whether ``cost_usd`` was computed by Jarvis from the tokens and a price (the agent
    reported no cost of its own), not reported by the agent."""


def read_usage(raw: object) -> Usage | str:
    """A progress event's ``usage``, or the sentence saying why it cannot be read.

    Read apart from the event: an event whose usage is unreadable is still a step of the run,
    and is kept; the attempt is marked instead, so that no budget on its figures is passed.
    """
    try:
        return Usage.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False)[:3]:
            where = ".".join(["usage", *(str(part) for part in error["loc"])])
            value, limit = error.get("input"), (error.get("ctx") or {}).get("le")
            if error["type"] == "less_than_equal" and isinstance(value, int | float):
                problems.append(f"{where} is {value:,}, more than the {limit:,} an attempt "
                                "may report")  # fmt: skip
            else:
                said = str(error["msg"])
                problems.append(f"{where}: {said[:1].lower()}{said[1:]} (got {preview(value)})")
        return "; ".join(problems)


class ProgressEvent(BaseModel):
    """``progress/<run_id>/<timestamp>-<seq>.json``: one step of a worker's run."""

    model_config = _STRICT

    kind: Literal["worker_progress"]
    run_id: RunId
    """Must equal the run folder the file was found in."""
    group_folder: Lane
    """Must equal the lane folder the file was found in."""
    timestamp: Timestamp
    phase: Annotated[Text, Field(max_length=PHASE_MAX)]
    summary: Annotated[str, Field(max_length=TEXT_MAX)]
    """Shown to operators; control characters are escaped on display, not here."""
    tool_used: str | None = None
    usage: Any = None
    """Tokens and cost of the attempt so far (cumulative: each figure's largest stands), read
    apart by `read_usage`: an unreadable usage does not refuse the event."""
    seq: Annotated[int, Field(ge=0), AfterValidator(_storable)]
    """From 0 (at most `STORE_INT_MAX`), increasing within one query of the worker's (NanoClaw's
    starts again at 0 for each); neither the event's identity nor its order on its own
    (`core.ipc.progress_order`)."""

    @cached_property
    def at_utc(self) -> str:
        """``timestamp`` as fixed-width UTC text, which sorts as the moments do."""
        return utc_text(datetime.fromisoformat(self.timestamp))


class AckFile(BaseModel):
    """``steer/<run_id>.acked.json``: the worker has taken in the steer ``steer_id``."""

    model_config = _STRICT

    steer_id: SteerId
    acked_at: Timestamp


class SteerFile(BaseModel):
    """``steer/<run_id>.json``: the host's pending steer for a run."""

    model_config = _STRICT

    kind: Literal["worker_steer"]
    run_id: RunId
    from_group: Text
    """The operator's lane or name."""
    timestamp: Timestamp
    message: Annotated[Text, Field(max_length=TEXT_MAX)]
    steer_id: SteerId


class SteerWorkerTask(BaseModel):
    """A lane asks the host to steer a run, as an operator named after the lane would."""

    model_config = _STRICT

    type: Literal["steer_worker"]
    run_id: RunId
    message: Annotated[Text, Field(max_length=TEXT_MAX)]


class DispatchTask(BaseModel):
    """A lane asks the host to dispatch work; ``payload`` is validated by intake, not here."""

    model_config = _STRICT

    type: Literal["dispatch"]
    target: Lane
    payload: dict[str, Any]


Task = Annotated[SteerWorkerTask | DispatchTask, Field(discriminator="type")]
"""``tasks/<name>.json``: what a lane asks of the host, told apart by ``type``."""

_TASK = TypeAdapter[SteerWorkerTask | DispatchTask](Task)


class MessageFile(BaseModel):
    """``messages/<name>.json``: a chat message from a lane (NanoClaw adds fields of its own)."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    type: Literal["message"]
    chatJid: str  # NanoClaw's field name, kept as written
    text: str


def _load(data: bytes) -> tuple[dict[str, Any] | None, list[FieldError]]:
    loaded = load_object(data, limit=MAX_EVENT_BYTES)
    if not loaded.ok:
        return None, list(loaded.errors)
    document: dict[str, Any] = loaded.value
    return document, []


def parse_progress(data: bytes, *, lane: str, run_id: str) -> ProgressEvent | list[FieldError]:
    """A progress event found at ``<lane>/progress/<run_id>/``, or every problem with it.

    Besides the shape, the body must agree with its path: ``run_id_mismatch`` when ``run_id``
    is not the folder's run, ``group_folder_mismatch`` when ``group_folder`` is not the lane.
    The folder is the writer's identity, so a body that claims another is refused outright.
    """
    document, errors = _load(data)
    if document is None:
        return errors
    claimed_run = document.get("run_id")
    if isinstance(claimed_run, str) and claimed_run != run_id:
        errors.append(
            FieldError(
                "run_id",
                "run_id_mismatch",
                f"run_id {preview(claimed_run)} is not the run folder {preview(run_id)}.",
            )
        )
    claimed_lane = document.get("group_folder")
    if isinstance(claimed_lane, str) and claimed_lane != lane:
        errors.append(
            FieldError(
                "group_folder",
                "group_folder_mismatch",
                f"group_folder {preview(claimed_lane)} is not the lane folder {preview(lane)}.",
            )
        )
    if not errors:
        plain = _plain_progress(document, lane=lane, run_id=run_id)
        if plain is not None:
            return plain
    try:
        event = ProgressEvent.model_validate(document)
    except ValidationError as exc:
        errors.extend(from_validation_error(exc, document))
        return sorted_errors(errors)
    return sorted_errors(errors) if errors else event


_PROGRESS_FIELDS = frozenset(ProgressEvent.model_fields)
_PROGRESS_REQUIRED = frozenset(
    name for name, field in ProgressEvent.model_fields.items() if field.is_required()
)


def _plain_progress(document: dict[str, Any], *, lane: str, run_id: str) -> ProgressEvent | None:
    """The event, when the document is plainly valid: the usual case, checked by the model's own
    rules without the cost of its validator (a third of ingesting an event); None for anything
    else, which the model then judges and explains. It never accepts what the model refuses
    (a property test holds the two to that)."""
    if not _PROGRESS_REQUIRED <= document.keys() <= _PROGRESS_FIELDS:
        return None
    phase, summary, tool = document["phase"], document["summary"], document.get("tool_used")
    stamp, seq = document["timestamp"], document["seq"]
    if (
        document["kind"] != "worker_progress"
        or document["run_id"] != run_id
        or document["group_folder"] != lane
        or type(stamp) is not str
        or len(stamp) > 64
        or type(phase) is not str
        or len(phase) > PHASE_MAX
        or not phase.strip()
        or type(summary) is not str
        or len(summary) > TEXT_MAX
        or (tool is not None and type(tool) is not str)
        or type(seq) is not int
        or not 0 <= seq <= STORE_INT_MAX
        or not all(_unicode(text) for text in (phase, summary, tool or ""))
        or run_id_problem(run_id) is not None
        or lane_problem(lane) is not None
    ):
        return None
    try:
        utc_text(datetime.fromisoformat(stamp))
    except ValueError:
        return None
    return ProgressEvent.model_construct(**document)


def _unicode(text: str) -> bool:
    """Whether the model takes ``text`` as a string: a lone surrogate it refuses."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_ack(data: bytes) -> AckFile | list[FieldError]:
    """A steer acknowledgement, or every problem with it."""
    document, errors = _load(data)
    if document is None:
        return errors
    try:
        return AckFile.model_validate(document)
    except ValidationError as exc:
        return sorted_errors(from_validation_error(exc, document))


def parse_steer(data: bytes) -> SteerFile | list[FieldError]:
    """A steer file (as a worker reads it), or every problem with it."""
    document, errors = _load(data)
    if document is None:
        return errors
    try:
        return SteerFile.model_validate(document)
    except ValidationError as exc:
        return sorted_errors(from_validation_error(exc, document))


#: NanoClaw's task types that Jarvis does not carry out (its scheduler and group registry);
#: each is refused with a sentence naming it, not as an unknown type.
NANOCLAW_TASK_TYPES: Final = (
    "schedule_task",
    "pause_task",
    "resume_task",
    "cancel_task",
    "update_task",
    "refresh_groups",
    "register_group",
)


def parse_task(data: bytes) -> SteerWorkerTask | DispatchTask | list[FieldError]:
    """A lane's task, by its ``type``, or every problem with it."""
    document, errors = _load(data)
    if document is None:
        return errors
    kind = document.get("type")
    if kind in NANOCLAW_TASK_TYPES:
        return [
            FieldError(
                "type",
                "unsupported_task_type",
                f"{kind} is a NanoClaw task type Jarvis does not carry out (it has no scheduler "
                "or group registry); Jarvis takes 'steer_worker' and 'dispatch' tasks.",
            )
        ]
    try:
        return _TASK.validate_python(document)
    except ValidationError as exc:
        return sorted_errors(_tag_errors(e) for e in from_validation_error(exc, document))


def _tag_errors(error: FieldError) -> FieldError:
    # An unknown ``type`` is reported against the whole document by the shared mapping; here the
    # field is known, and naming it is what helps the writer.
    if error.field == ROOT and error.code == "not_allowed":
        return FieldError("type", "not_allowed", "type must be 'steer_worker' or 'dispatch'.")
    return error


def parse_message(data: bytes) -> MessageFile | list[FieldError]:
    """A lane's chat message, or every problem with it; fields beyond the three are kept."""
    document, errors = _load(data)
    if document is None:
        return errors
    try:
        return MessageFile.model_validate(document)
    except ValidationError as exc:
        return sorted_errors(from_validation_error(exc, document))
