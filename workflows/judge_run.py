"""`goldboard judge run`: an LLM judge labels the study's items through an OpenAI-compatible endpoint.

For each item of a round the prompt is built from the schema (field titles, value displays and
definitions, hints, shown_when conditions), the case and the model output as the units record
them (what raters see in Label Studio), and the round's guideline version; or from the user's
Jinja template with the same variables.  The answer is asked as JSON constrained to the schema's
values (``response_format`` JSON schema), with a short rationale and an explicit ``cannot judge``
(abstention, kept apart from a value such as "Insufficient Information").

Every answer is validated as a clinician's rating is (:meth:`Field.normalize`); an answer off the
schema is held out with its raw text and counted, never coerced.  Every response is appended to
``judges/NAME/responses.jsonl`` as it arrives (Ctrl-C keeps what was received) with its
provenance; a rerun asks only the (item, sample) pairs whose key (model, rendered prompt hash,
parameters) has no answer yet.  The labels of sample 0 are recorded as the judge's labels
(``judges/labels.csv``, never a round's ratings: no clinician's project or statistic sees them).

The key comes from ``OPENAI_API_KEY`` or a 0600 key file; it is sent in the Authorization header
only, never printed, logged or written.  The client is ``httpx`` (already installed with the
Label Studio SDK): one dependency fewer than the ``openai`` package, and the whole protocol used
here is one POST to ``/chat/completions`` and one GET of ``/models``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import stat
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from goldboard.cases.ratings import adjudicable_fields
from goldboard.errors import GoldboardError
from goldboard.fileio import iter_jsonl, write_csv_atomic
from goldboard.label_configs.schema import Field, Schema, ValueNotInSchema
from goldboard.study import Study, check_rater_name
from goldboard.text import utc_now
from goldboard.workflows.judge_responses import read_responses

CANNOT_JUDGE = "cannot judge"
NOT_SHOWN = "not shown"

DEFAULT_TEMPLATE = """\
You are a clinician rating a medical AI system's output for the study "{{ schema_title }}"\
{% if guideline_version %} (guideline version {{ guideline_version }}){% endif %}.
{% if instructions %}
Instructions:
{{ instructions }}
{% endif %}
Case ({{ item_id }}):
{{ case_text }}
{% if output_text %}
Model output{% if model %} ({{ model }}){% endif %}:
{{ output_text }}
{% endif %}
Rate each field. Answer with one of the listed values exactly, or "{{ cannot_judge }}" when the \
material does not let you judge (this is not the same as a value meaning insufficient information).
{% for f in fields %}
Field "{{ f.name }}": {{ f.title }}{% if f.description %} ({{ f.description }}){% endif %}
{%- if f.shown_when %}
  Only when {{ f.shown_when }}; otherwise answer "{{ not_shown }}".{% endif %}
{%- for v in f.choices %}
  - "{{ v.value }}"{% if v.label != v.value %} [{{ v.label }}]{% endif %}{% if v.definition %}: {{ v.definition }}{% endif %}
{%- endfor %}
{% endfor %}
Reply with JSON only: {"rationale": "<one or two sentences>", {% for f in fields %}"{{ f.name }}": "<value>"\
{% if not loop.last %}, {% endif %}{% endfor %}}.
"""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- key and endpoint


def read_key(key_file: str | Path | None) -> str:
    """The API key: the 0600 ``key_file`` when given, else ``OPENAI_API_KEY``, else '' (a local
    server needs none).  A key file others can read is refused."""
    if key_file:
        p = Path(key_file)
        if not p.is_file():
            raise GoldboardError(f"{p}: key file not found", param="key_file")
        mode = stat.S_IMODE(p.stat().st_mode)
        if mode & 0o077:
            raise GoldboardError(f"{p}: key file is readable by others (mode {mode:o}); chmod 600 it", param="key_file")
        return p.read_text(encoding="utf-8").strip()
    return os.environ.get("OPENAI_API_KEY", "").strip()


def shown_endpoint(base_url: str) -> str:
    """``base_url`` without user, password, query or fragment (nothing secret is recorded)."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GoldboardError(f"{base_url!r}: give the endpoint as http(s)://host[:port]/v1", param="base_url")
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def endpoint_kind(endpoint: str) -> str:
    host = urlsplit(endpoint).hostname or ""
    local = (
        host in ("localhost", "::1") or host.startswith("127.") or host.startswith("10.") or host.startswith("192.168.")
    )
    return "local server" if local else "hosted API"


# --------------------------------------------------------------------------- prompt and answer schema


def judged_fields(schema: Schema) -> list[Field]:
    """The single-choice fields a rater answers (multi-choice and text fields are not asked)."""
    return [f for f in adjudicable_fields(schema) if f.kind != "multi" and f.values]


def field_vars(f: Field, order: list[str] | None = None) -> dict[str, Any]:
    by_value = {v.value: v for v in f.values}
    values = [by_value[x] for x in (order or [v.value for v in f.values])]
    shown = ""
    if f.shown_when:
        shown = f"{f.shown_when.field} is " + " or ".join(f'"{v}"' for v in f.shown_when.values)
    return {
        "name": f.name,
        "title": f.title or f.name,
        "description": f.description,
        "shown_when": shown,
        "choices": [{"value": v.value, "label": v.label, "definition": v.definition} for v in values],
    }


def prompt_vars(schema: Schema, unit: dict, guideline: str, rng: random.Random | None) -> dict[str, Any]:
    """The template's variables; ``rng``: shuffle each field's value order (position bias)."""
    fields = []
    for f in judged_fields(schema):
        order = [v.value for v in f.values]
        if rng is not None:
            rng.shuffle(order)
        fields.append(field_vars(f, order))
    return {
        "schema_title": schema.title or schema.name,
        "schema_name": schema.name,
        "instructions": schema.instructions,
        "guideline_version": guideline,
        "item_id": unit["item_id"],
        "case_text": unit.get("case_text") or "",
        "output_text": unit.get("output_text") or "",
        "model": unit.get("model") or "",
        "fields": fields,
        "cannot_judge": CANNOT_JUDGE,
        "not_shown": NOT_SHOWN,
    }


RESPONSE_FORMATS = ("json_schema", "json_object", "none")


def answer_schema(schema: Schema, kind: str = "json_schema") -> dict[str, Any] | None:
    """The ``response_format``: a rationale and one of each field's values, as a JSON schema.

    ``json_schema``: OpenAI's form (hosted APIs, vLLM, Ollama); ``json_object``: the same schema
    in llama-cpp-python's form (``{"type": "json_object", "schema": ...}``, a grammar on the
    server); ``none``: the prompt alone asks for the JSON."""
    props: dict[str, Any] = {"rationale": {"type": "string", "maxLength": 400}}
    for f in judged_fields(schema):
        extra = [NOT_SHOWN] if f.shown_when else []
        props[f.name] = {"type": "string", "enum": [v.value for v in f.values] + extra + [CANNOT_JUDGE]}
    body = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
    if kind == "json_object":
        return {"type": "json_object", "schema": body}
    if kind == "none":
        return None
    return {"type": "json_schema", "json_schema": {"name": "rating", "strict": True, "schema": body}}


def load_template(path: str | Path | None):
    import jinja2

    text = DEFAULT_TEMPLATE if path is None else Path(path).read_text(encoding="utf-8")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    try:
        return env.from_string(text), sha256_text(text)
    except jinja2.TemplateSyntaxError as e:
        raise GoldboardError(f"{path}:{e.lineno}: template error: {e.message}", param="template") from None


# --------------------------------------------------------------------------- validating an answer


def parse_answer(content: str, schema: Schema) -> dict[str, Any]:
    """``{"status": ok|abstain|off_schema, "values": {field: value}, "rationale", "problem"}``.

    Each value is checked by the field's own :meth:`Field.normalize` (a clinician's rating's
    check): exact, alias or case-folded spelling; anything else holds the answer out."""
    try:
        obj = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return {"status": "off_schema", "values": {}, "rationale": "", "problem": "not JSON"}
    if not isinstance(obj, dict):
        return {"status": "off_schema", "values": {}, "rationale": "", "problem": "not a JSON object"}
    values: dict[str, str] = {}
    abstained = []
    for f in judged_fields(schema):
        raw = obj.get(f.name)
        if raw is None:
            return _off(obj, f"no {f.name}")
        text = str(raw).strip()
        if text.casefold() == CANNOT_JUDGE:
            abstained.append(f.name)
            continue
        if f.shown_when and text.casefold() == NOT_SHOWN:
            values[f.name] = ""
            continue
        try:
            values[f.name] = f.normalize(text)
        except ValueNotInSchema:
            return _off(obj, f"{text!r} is not a value of {f.name}")
    status = "abstain" if abstained and not values else "ok"
    return {"status": status, "values": values, "abstained": abstained, "rationale": str(obj.get("rationale", ""))}


def _off(obj: dict, problem: str) -> dict[str, Any]:
    return {"status": "off_schema", "values": {}, "rationale": str(obj.get("rationale", "")), "problem": problem}


# --------------------------------------------------------------------------- the client


class ChatClient:
    """OpenAI-compatible ``/chat/completions`` over httpx: timeouts, retries with exponential
    backoff on 429, 5xx and transport errors (``Retry-After`` honoured, capped)."""

    RETRY_STATUS = {429, 500, 502, 503, 504}

    def __init__(self, base_url: str, key: str, timeout: float, retries: int, concurrency: int, backoff: float = 1.0):
        import httpx

        headers = {"Authorization": f"Bearer {key}"} if key else {}
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self.http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, limits=limits)
        self.retries = retries
        self.backoff = backoff
        self._key = key  # only to take it out of what an endpoint echoes back (a 401's message)
        self.requests = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        self.http.close()

    def models(self) -> list[str]:
        try:
            r = self.http.get("/models")
            return [str(m.get("id")) for m in r.json().get("data", [])] if r.status_code == 200 else []
        except Exception:  # noqa: BLE001 - the model list is provenance only
            return []

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response JSON, or raises :class:`GoldboardError` after the last retry."""
        import httpx

        last = ""
        for attempt in range(self.retries + 1):
            with self._lock:
                self.requests += 1
            try:
                r = self.http.post("/chat/completions", json=body)
            except httpx.TransportError as e:  # timeouts included
                last = f"{type(e).__name__}"
            else:
                if r.status_code == 200:
                    try:
                        return r.json()
                    except ValueError:
                        last = "HTTP 200 with a body that is not JSON"
                elif r.status_code in self.RETRY_STATUS:
                    last = f"HTTP {r.status_code}"
                    wait = _retry_after(r.headers.get("retry-after"))
                    if attempt < self.retries:
                        time.sleep(wait if wait is not None else self.backoff * 2**attempt)
                    continue
                else:
                    text = r.text.replace(self._key, "[the key]") if self._key else r.text  # before cutting it
                    raise GoldboardError(f"the endpoint answered HTTP {r.status_code}: {text[:200]}")
            if attempt < self.retries:
                time.sleep(self.backoff * 2**attempt)
        raise GoldboardError(f"no answer after {self.retries + 1} attempts ({last})")


def _retry_after(value: str | None) -> float | None:
    try:
        return min(float(value), 30.0) if value is not None else None
    except ValueError:
        return None


# --------------------------------------------------------------------------- the run


def responses_path(study: Study, judge: str) -> Path:
    return study.path / "judges" / judge / "responses.jsonl"


def round_units(study: Study, round_number: int | None) -> tuple[int, list[dict]]:
    rnd = study.round(round_number)
    units = []  # the records as written (no pandas: a fully cached rerun starts in a second)
    if study.units_path.exists():
        for i, rec in iter_jsonl(study.units_path, " in the units file"):
            if not isinstance(rec, dict) or "item_id" not in rec:
                raise GoldboardError(f"{study.units_path}:{i}: not a unit record (a JSON object with an item_id)")
            units.append(rec)
    recs = [r for r in units if rnd.number in (r.get("rounds") or [rnd.number])]
    if not recs:
        raise GoldboardError(f"{study.path}: round {rnd.number} has no items", param="round_number")
    blank = [
        r["item_id"]
        for r in recs
        if not str(r.get("case_text") or "").strip() and not str(r.get("output_text") or "").strip()
    ]
    if blank:
        raise GoldboardError(
            f"{study.path}: item {blank[0]!r} (and {len(blank) - 1} more) has no case text or model output in "
            f"units.jsonl; a judge needs what raters saw (push the round's cases with goldboard push)",
            param="round_number",
        )
    return rnd.number, recs


def plan_requests(
    study: Study, units: list[dict], guideline: str, template, template_hash: str, params: dict[str, Any], samples: int
) -> list[dict[str, Any]]:
    """One request per (item, sample): its rendered prompt, body and cache key."""
    fmt = answer_schema(study.schema, params["response_format"])
    out = []
    for unit in units:
        for s in range(samples):
            rng = random.Random(f"{params['seed']}:{unit['item_id']}:{s}") if s > 0 else None
            prompt = template.render(**prompt_vars(study.schema, unit, guideline, rng))
            body = {
                "model": params["model"],
                "messages": [{"role": "user", "content": prompt}],
                "temperature": params["temperature"],
                "max_tokens": params["max_tokens"],
                "seed": params["seed"] + s,
            }
            if fmt is not None:
                body["response_format"] = fmt
            phash = sha256_text(prompt)
            key = sha256_text(json.dumps([params, phash, s], sort_keys=True))
            out.append({"item_id": unit["item_id"], "sample": s, "prompt_hash": phash, "body": body, "key": key})
    return out


def _answer_record(req: dict, resp: dict, latency: float, schema: Schema, ctx: dict) -> dict[str, Any]:
    choice = (resp.get("choices") or [{}])[0]
    content = (choice.get("message") or {}).get("content") or ""
    parsed = parse_answer(content, schema)
    usage = resp.get("usage") or {}
    return {
        "key": req["key"],
        "item_id": req["item_id"],
        "sample": req["sample"],
        "status": parsed["status"],
        "values": parsed["values"],
        "abstained": parsed.get("abstained", []),
        "rationale": parsed["rationale"],
        "problem": parsed.get("problem", ""),
        "raw": content,
        "model_reported": resp.get("model", ""),
        "endpoint": ctx["endpoint"],
        "template_sha256": ctx["template_hash"],
        "prompt_sha256": req["prompt_hash"],
        "temperature": req["body"]["temperature"],
        "seed": req["body"]["seed"],
        "max_tokens": req["body"]["max_tokens"],
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "latency_s": round(latency, 3),
        "at": utc_now(),
    }


def send_all(
    client: ChatClient, todo: list[dict], out: Path, schema: Schema, ctx: dict, concurrency: int, progress: bool
):
    """Send ``todo``; append each record to ``out`` as it arrives.  Returns (records, errors)."""
    from tqdm import tqdm

    out.parent.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()
    errors: list[str] = []
    done: list[dict] = []

    def one(req: dict) -> None:
        t0 = time.monotonic()
        try:
            resp = client.chat(req["body"])
        except GoldboardError as e:
            with lock:
                errors.append(f"{req['item_id']} (sample {req['sample']}): {e}")
            return
        rec = _answer_record(req, resp, time.monotonic() - t0, schema, ctx)
        with lock, open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            done.append(rec)

    bar = tqdm(total=len(todo), disable=not progress or not todo, desc="judge", unit="answer", leave=False)
    pool = ThreadPoolExecutor(max_workers=concurrency)
    try:
        futures = [pool.submit(one, r) for r in todo]
        for _ in as_completed(futures):
            bar.update(1)
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        bar.close()
    return done, errors


def run_judge(
    study_dir: str | Path,
    *,
    judge: str,
    model: str,
    base_url: str,
    key_file: str | Path | None = None,
    round_number: int | None = None,
    template: str | Path | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    max_tokens: int = 256,
    response_format: str = "json_schema",
    samples: int = 1,
    concurrency: int = 4,
    timeout: float = 120.0,
    retries: int = 3,
    limit: int | None = None,
    progress: bool = False,
    echo: Callable[[str], None] = lambda s: None,
    backoff: float = 1.0,
) -> dict[str, Any]:
    """Ask the judge about every item of the round (the missing answers only), record its labels
    (sample 0) and provenance; returns the run's summary."""
    study = Study.open(study_dir)
    check_rater_name(judge, "judge")
    if judge in study.raters:
        raise GoldboardError(
            f"{judge!r} is a rater (a clinician) of this study; a judge needs its own name", param="judge"
        )
    endpoint = shown_endpoint(base_url)
    key = read_key(key_file)
    number, units = round_units(study, round_number)
    if limit:
        units = units[:limit]
    tmpl, thash = load_template(template)
    params = {"model": model, "temperature": temperature, "seed": seed, "max_tokens": max_tokens, "template": thash,
              "response_format": response_format}  # fmt: skip
    reqs = plan_requests(study, units, study.round(number).guideline_version, tmpl, thash, params, samples)
    out = responses_path(study, judge)
    have = read_responses(out)
    todo = [r for r in reqs if r["key"] not in have]
    echo(f"{judge}: {len(reqs)} answers needed, {len(reqs) - len(todo)} cached, asking {len(todo)}")
    served, errors, sent = [], [], 0
    if todo:  # nothing to ask: no client (its TLS context alone takes a tenth of a second)
        client = ChatClient(base_url, key, timeout, retries, concurrency, backoff)
        try:
            served = client.models()
            ctx = {"endpoint": endpoint, "template_hash": thash}
            _, errors = send_all(client, todo, out, study.schema, ctx, concurrency, progress)
            sent = client.requests
        finally:
            client.close()
    have = read_responses(out)
    recs = [have[r["key"]] for r in reqs if r["key"] in have]
    summary = summarize(recs, reqs, samples)
    summary.update(judge=judge, round=number, endpoint=endpoint, endpoint_kind=endpoint_kind(endpoint),
                   requests_sent=sent, errors=errors, served_models=served, params=params, samples=samples)  # fmt: skip
    summary["answers_sha256"] = sha256_text(json.dumps(sorted(r["key"] for r in recs)))
    if todo or _recorded_answers(study, judge) != summary["answers_sha256"]:
        record_run(study, judge, recs, summary)  # else: these very answers are recorded already
    return summary


def _recorded_answers(study: Study, judge: str) -> str | None:
    """The fingerprint of the answers the judge's recorded run holds (None: none recorded)."""
    entry = ((study.extra.get("judge") or {}).get("judges") or {}).get(judge) or {}
    run = entry.get("run") or {}
    return run.get("answers_sha256") if (study.path / "judges" / judge / "labels.csv").exists() else None


def summarize(recs: list[dict], reqs: list[dict], samples: int) -> dict[str, Any]:
    """Counts, and with samples > 1 self-consistency and position bias."""
    first = [r for r in recs if r["sample"] == 0]
    counts = {s: sum(r["status"] == s for r in first) for s in ("ok", "abstain", "off_schema")}
    data: dict[str, Any] = {
        "items": len({r["item_id"] for r in reqs}),
        "answers": len(recs),
        "missing": len(reqs) - len(recs),
        "labelled": counts["ok"],
        "abstained": counts["abstain"],
        "off_schema": counts["off_schema"],
        "models_reported": sorted({r["model_reported"] for r in recs if r.get("model_reported")}),
        "held_out": [
            {"item_id": r["item_id"], "problem": r["problem"], "raw": r["raw"]}
            for r in first
            if r["status"] == "off_schema"
        ],
    }
    if samples > 1:
        data.update(consistency(recs))
    return data


def consistency(recs: list[dict]) -> dict[str, Any]:
    """Self-consistency: share of items whose samples all give the same answer; position bias:
    share of shuffled-order answers that differ from the item's sample 0 (the schema's order)."""
    by_item: dict[str, dict[int, str]] = {}
    for r in recs:
        by_item.setdefault(r["item_id"], {})[r["sample"]] = json.dumps(r["values"], sort_keys=True) + r["status"]
    full = [v for v in by_item.values() if 0 in v and len(v) > 1]
    same = sum(len(set(v.values())) == 1 for v in full)
    moved = [v[s] != v[0] for v in full for s in v if s > 0]
    return {
        "self_consistency": same / len(full) if full else None,
        "position_bias": sum(moved) / len(moved) if moved else None,
        "consistency_items": len(full),
    }


def record_run(study: Study, judge: str, recs: list[dict], summary: dict) -> None:
    """Sample 0's labels as the judge's labels in the study, with the run's provenance."""
    import pandas as pd

    from goldboard.workflows.judge import JUDGE_KEY, judge_settings, record_judge_labels

    rows = [
        {"item_id": r["item_id"], "field": f, "value": v}
        for r in recs
        if r["sample"] == 0 and r["status"] == "ok"
        for f, v in r["values"].items()
        if v != ""
    ]
    if not rows:
        return
    path = study.path / "judges" / judge / "labels.csv"
    write_csv_atomic(pd.DataFrame(rows, columns=["item_id", "field", "value"]), path)
    record_judge_labels(study, path, judge)
    cannot = [{"item_id": r["item_id"], "field": f} for r in recs if r["sample"] == 0 for f in r.get("abstained", [])]
    abstentions = study.path / "judges" / judge / "abstentions.csv"
    write_csv_atomic(pd.DataFrame(cannot, columns=["item_id", "field"]), abstentions)
    settings = judge_settings(study)
    entry = dict(settings["judges"][judge])
    entry["run"] = {
        "endpoint": summary["endpoint"],
        "endpoint_kind": summary["endpoint_kind"],
        "models_reported": summary["models_reported"],
        **{k: v for k, v in summary["params"].items()},
        "round": summary["round"],
        "samples": summary.get("samples", 1),
        "abstentions": str(abstentions.relative_to(study.path)),
        "answers_sha256": summary.get("answers_sha256"),
        "abstained": summary["abstained"],
        "off_schema": summary["off_schema"],
        "responses": str(responses_path(study, judge).relative_to(study.path)),
        "ran_at": utc_now(),
    }
    for k in ("self_consistency", "position_bias"):
        if summary.get(k) is not None:
            entry["run"][k] = summary[k]
    study.extra[JUDGE_KEY] = {**settings, "judges": {**settings["judges"], judge: entry}}
    study.save()


def run_text(s: dict[str, Any]) -> str:
    lines = [
        f"{s['judge']}: {s['labelled']} of {s['items']} items labelled, {s['abstained']} abstained (cannot judge), "
        f"{s['off_schema']} off the schema (held out), {s['missing']} not answered; {s['requests_sent']} requests sent",
        f"  model {', '.join(s['models_reported']) or s['params']['model']} at {s['endpoint']} ({s['endpoint_kind']}), "
        f"template {s['params']['template'][:12]}, temperature {s['params']['temperature']}, seed {s['params']['seed']}, "
        f"max tokens {s['params']['max_tokens']}",
    ]
    if s.get("self_consistency") is not None:
        lines.append(f"  self-consistency {s['self_consistency']:.2f} over {s['consistency_items']} items")
    if s.get("position_bias") is not None:
        lines.append(f"  position bias: {s['position_bias']:.2f} of shuffled-order answers moved")
    lines += [f"  held out {h['item_id']}: {h['problem']}: {h['raw'][:80]!r}" for h in s["held_out"][:5]]
    lines += [f"  error {e}" for e in s["errors"][:5]]
    if not s["labelled"] and s["answers"]:  # nothing to record as the judge's labels: say so, and where the answers are
        lines.append(
            f"  no label recorded: no answer gave one of the schema's values, so `goldboard judge --study` has nothing "
            f"of {s['judge']} to test and the report leaves it out; every answer is in judges/{s['judge']}/responses.jsonl"
        )
    return "\n".join(lines)
