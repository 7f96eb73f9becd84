"""The extraction table: which journal lines are entries, their kind, and their exact text."""

from __future__ import annotations

import decimal
import functools
import itertools
import json
import re
import shlex
from collections.abc import Container
from typing import Any, Literal, NamedTuple, get_args

import orjson

__all__ = [
    "KINDS",
    "MEMORY_TOOL",
    "WITHHELD",
    "ContextEdit",
    "Extracted",
    "Kind",
    "context_edit",
    "extract",
    "is_sensitive_path",
    "sensitive_call_ids",
    "tool_call_id",
]

Kind = Literal[
    "user",
    "assistant",
    "tool_result",
    "bash",
    "custom",
    "custom_message",
    "compaction",
    "branch_summary",
    "session_info",
    "label",
    "context_edit",
]
KINDS: tuple[Kind, ...] = get_args(Kind)
WITHHELD = "[sensitive file withheld]"
_ROLE_KINDS: dict[str, Kind] = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool_result",
    "bashExecution": "bash",
    "custom": "custom",
    "hookMessage": "custom",
}
_FIELD_KINDS: dict[str, tuple[Kind, str]] = {  # line type → (kind, the field holding its text)
    "compaction": ("compaction", "summary"),
    "branch_summary": ("branch_summary", "summary"),
    "session_info": ("session_info", "name"),
    "label": ("label", "label"),
}
_SECRET_BASENAMES = {
    ".env",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    "credentials.json",
}
_SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx")
_SECRET_PAIRS = {(".aws", "credentials"), (".docker", "config.json")}
_VALUED_OPTIONS = {"-n", "-c", "--lines", "--bytes"}
# the pagers whose output shows a file, each with its options that take a value
_PAGERS = {"cat": set(), "less": set(), "head": _VALUED_OPTIONS, "tail": _VALUED_OPTIONS}


class Extracted(NamedTuple):
    timestamp: str
    kind: Kind
    role: str | None
    tool_name: str | None
    text: str
    tokens_before: int | None
    # the text whose words search matches, when it differs from `text`: the memory's own tool
    # results have none, and an assistant entry's memory_context calls add none (JM-SEARCH-340)
    search_text: str | None = None

    @property
    def terms_text(self) -> str:
        """The text whose words search matches, with its tool calls' JSON escapes read."""
        return read_call_escapes(self.text if self.search_text is None else self.search_text)


class ContextEdit(NamedTuple):
    """What a Pi 1.x `context_edit` line does to the model's view of an earlier entry."""

    target_id: str
    replaced: bool  # False: the target is omitted from the context (replacement null)


def context_edit(obj: Any) -> ContextEdit | None:
    """The edit a parsed line makes, or None when it is no well-formed `context_edit`."""
    if not isinstance(obj, dict) or obj.get("type") != "context_edit" or "replacement" not in obj:
        return None
    target, replacement = obj.get("targetId"), obj["replacement"]
    if not isinstance(target, str) or not (replacement is None or isinstance(replacement, dict)):
        return None
    return ContextEdit(target, replacement is not None)


def is_sensitive_path(path: str) -> bool:
    # Names compare case-insensitively: on a case-insensitive file system `.ENV` is `.env`.
    parts = [part.lower() for part in path.replace("\\", "/").split("/") if part]
    base = parts[-1] if parts else ""
    return (
        base in _SECRET_BASENAMES
        or base.startswith(".env.")
        or base.endswith(_SECRET_SUFFIXES)
        or ".ssh" in parts  # known_hosts and config name hosts too, so the whole folder stays out
        or any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts))
    )


# An operator is a run of these characters outside quotes (a line break included); a redirection
# operator's next word is its target, and every other operator ends a simple command.
_OPERATOR_CHARS = "();<>|&\n"
_REDIRECTS = {">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", ">|"}


def _paged_paths(command: str) -> list[str]:
    """Every file a `cat|head|tail|less [options] <path>...` of the command line shows, in any of its
    simple commands (a pipeline, a list, a line, `sudo` before it); unparsable quoting shows none.
    `#` is an ordinary character: a comment's words count as operands, which can only withhold more."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=_OPERATOR_CHARS)
        lexer.whitespace = " \t\r"  # a line break is an operator, not a space
        lexer.commenters = ""
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return []
    paths: list[str] = []
    simple: list[str] = []
    for word in [*words, ";"]:
        if word in _REDIRECTS or not word or word.strip(_OPERATOR_CHARS):
            simple.append(word)
            continue
        while simple and simple[0] == "sudo":
            simple = simple[1:]
        pager, *operands = simple or [""]
        if (valued := _PAGERS.get(pager)) is not None:
            previous = pager
            for each in operands:
                target = previous in _REDIRECTS
                if (
                    not each.startswith("-")
                    and previous not in valued
                    and each not in _REDIRECTS
                    and not target
                ):
                    paths.append(each)
                previous = each
        simple = []
    return paths


def _sensitive_command(command: Any) -> bool:
    return isinstance(command, str) and any(is_sensitive_path(path) for path in _paged_paths(command))


def _sensitive_call(block: dict[str, Any]) -> bool:
    args = block.get("arguments")
    if not isinstance(args, dict):
        args = {}
    if block.get("name") == "read":
        path = args.get("path", args.get("file_path"))
        return isinstance(path, str) and is_sensitive_path(path)
    return block.get("name") == "bash" and _sensitive_command(args.get("command"))


def sensitive_call_ids(obj: dict[str, Any]) -> list[str]:
    """Tool-call ids of an assistant line that read a sensitive file (their results are withheld)."""
    message = obj.get("message") if obj.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        block["id"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "toolCall"
        and isinstance(block.get("id"), str)
        and _sensitive_call(block)
    ]


def _compact_json(value: Any) -> str:
    """`JSON.stringify(value)`: compact, keys in order, raw UTF-8, numbers as JavaScript writes them."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _FLOAT_OR_STRING.sub(_js_float, text)


# A float as Python writes it (with a point or an exponent), an integer of 16 digits or more (past
# 2**53 JavaScript holds the nearest double), or a whole string, which is left alone.
_FLOAT_OR_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?\d+(?:\.\d+)?[eE][-+]?\d+|-?\d+\.\d+|-?\d{16,})')


def _js_float(found: re.Match[str]) -> str:
    """Number::toString (ECMA-262) of the number found, as a double: its shortest digits, in plain
    notation from 1e-6 up to 1e21 and as `d.ddde±x` outside; `found` unchanged when it is a string."""
    if found.group(1) is None:
        return found.group(0)
    number = float(found.group())  # the whole match: the number
    if number == 0:
        return "0"
    digits_tuple, exponent = decimal.Decimal(repr(abs(number))).as_tuple()[1:]
    digits = "".join(map(str, digits_tuple)).rstrip("0")
    point = len(digits_tuple) + int(exponent)  # digits[:point] is the whole part
    sign = "-" if number < 0 else ""
    if not -6 < point <= 21:  # from 1e21 up, or below 1e-6
        fraction = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{fraction}e{point - 1:+d}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    if point > 0:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}0.{'0' * -point}{digits}"


_CALL_LINE = "[tool call] "
_JSON_ESCAPE = re.compile(r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})')


def _unescaped(found: re.Match[str]) -> str:
    return _escaped(found.group())


@functools.lru_cache(maxsize=1024)
def _escaped(escape: str) -> str:
    """The character a JSON escape stands for, as JSON reads it."""
    return str(json.loads(f'"{escape}"'))


def read_call_escapes(text: str) -> str:
    """The text with the JSON escapes of its tool-call lines read as the characters they stand for
    (JM-SEARCH-043), for its search terms: a word that starts a line of a written file is that
    word, not `n` and the word. A tool call's arguments are compact JSON on one line, where every
    backslash starts an escape."""
    if _CALL_LINE not in text:
        return text
    return "\n".join(
        _JSON_ESCAPE.sub(_unescaped, line) if line.startswith(_CALL_LINE) else line
        for line in text.split("\n")
    )


MEMORY_TOOL = "memory_context"  # the memory's own tool: its calls and results are no history to search


def _blocks(content: Any, images: bool, calls: Container[str] | None = None) -> list[str]:
    """The parts of a content: text blocks, `[image]` for images when `images`; tool calls when
    `calls` is not None, but for those of the tools it names."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "image" and images:
            parts.append("[image]")
        elif kind == "toolCall" and calls is not None and block.get("name") not in calls:
            args = block.get("arguments", {})
            parts.append(f"{_CALL_LINE}{block.get('name')} {_compact_json(args)}")
    return parts


def _assistant_text(message: dict[str, Any], own_calls: bool) -> str:
    content = message.get("content")
    parts = (
        _blocks(content, images=True, calls=() if own_calls else (MEMORY_TOOL,))
        if isinstance(content, list)
        else []
    )
    error = message.get("errorMessage")
    if isinstance(error, str) and error:
        parts.append(f"[error] {error}")
    return "\n".join(parts)


def _message_text(message: dict[str, Any], kind: Kind, withheld: bool) -> str | None:
    """The text of a message; None when it is no entry whatever its text (a bash line without a
    command)."""
    if kind == "user":
        return "\n".join(_blocks(message.get("content"), images=True))
    if kind == "assistant":
        return _assistant_text(message, own_calls=True)
    if kind == "tool_result":
        content = message.get("content")
        text = "\n".join(_blocks(content, images=True) if isinstance(content, list) else [])
        return WITHHELD if withheld and text else text
    if kind == "bash":
        command = message.get("command")
        if not isinstance(command, str):
            return None
        if _sensitive_command(command):
            return WITHHELD
        output = message.get("output")
        return f"$ {command}\n{output}" if isinstance(output, str) and output else f"$ {command}"
    return "\n".join(_blocks(message.get("content"), images=False))


def tool_call_id(message: dict[str, Any]) -> str | None:
    """A tool result's `toolCallId` when it is a string, the only shape that names a call: a
    journal may hold any JSON there (JM-JOURNAL-009)."""
    call_id = message.get("toolCallId")
    return call_id if isinstance(call_id, str) else None


def _entry_text(
    obj: dict[str, Any], withheld_calls: Container[str]
) -> tuple[Kind | None, str | None, str | None, str | None]:
    """(kind, text, role, tool name) of a line; kind None when the line is not an entry type."""
    kind = obj.get("type")
    if kind == "message":
        message = obj.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(message, dict) or role not in _ROLE_KINDS:
            return None, "", None, None
        entry_kind = _ROLE_KINDS[role]
        withheld = entry_kind == "tool_result" and tool_call_id(message) in withheld_calls
        tool = message.get("toolName") if entry_kind == "tool_result" else None
        text = _message_text(message, entry_kind, withheld)
        return entry_kind, text, role, tool if isinstance(tool, str) else None
    if kind == "custom_message":
        return "custom_message", "\n".join(_blocks(obj.get("content"), images=True)), None, None
    if kind == "context_edit":  # the words that stood in the target's place in the context
        replacement = obj.get("replacement")
        content = replacement.get("content") if isinstance(replacement, dict) else None
        return "context_edit", "\n".join(_blocks(content, images=True)), None, None
    if isinstance(kind, str) and kind in _FIELD_KINDS:
        entry_kind, field = _FIELD_KINDS[kind]
        value = obj.get(field)
        return entry_kind, value if isinstance(value, str) else "", None, None
    return None, "", None, None


def extract(obj: dict[str, Any], withheld_calls: Container[str]) -> Extracted | None:
    """The entry a parsed line with a string `id` carries (its callers check both), or None (header,
    metadata, empty text, unknown type or role)."""
    kind, text, role, tool = _entry_text(obj, withheld_calls)
    if kind is None or not text:
        return None
    search_text = _search_text(obj, kind, tool, text)
    timestamp = obj.get("timestamp")
    tokens = obj.get("tokensBefore") if kind == "compaction" else None
    return Extracted(
        timestamp=timestamp if isinstance(timestamp, str) else "",
        kind=kind,
        role=role,
        tool_name=tool,
        text=text,
        tokens_before=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
        search_text=search_text,
    )


def _search_text(obj: dict[str, Any], kind: Kind, tool: str | None, text: str) -> str | None:
    """The words search matches in an entry, when they are not its text: none in a result of the
    memory's own tool (a copy of other entries), and an assistant entry's text without its
    memory_context call blocks (the model's query repeats the question; JM-SEARCH-340)."""
    if kind == "tool_result" and tool == MEMORY_TOOL:
        return ""
    if kind != "assistant":
        return None
    content = obj["message"].get("content")
    if not isinstance(content, list) or not any(
        isinstance(block, dict) and block.get("type") == "toolCall" and block.get("name") == MEMORY_TOOL
        for block in content
    ):
        return None
    return _assistant_text(obj["message"], own_calls=False)
