"""Benchmark: `goldboard judge run` on 200 items against a lean concurrent script, and the cached rerun.

Run:  .venv/bin/python benchmarks/bench_judge.py [--items 200] [--concurrency 4] [--delay 0.1] [--pairs 3]
      .venv/bin/python benchmarks/bench_judge.py --base-url http://127.0.0.1:8000/v1 --model gemma-3-270m \\
          --response-format json_object   # a real server instead of the fake one

Builds a study of ``--items`` items (study init, pull --from-table of a generated two-rater table,
each unit given a case text as a push would), then, in turn -- lean, goldboard, lean, goldboard ...
(``--pairs`` pairs) -- times as whole processes (interpreter start and imports included):

* ``goldboard judge run --study S --judge bench ...`` on a fresh copy of the study (nothing cached);
* the yardstick: the leanest script that sends the very same request bodies (goldboard's own
  rendered prompts, dumped once) with httpx and a thread pool of the same ``--concurrency``, and
  writes the answers to a JSONL file -- no validation, no provenance, no study;

and prints the median wall time of each, the median of the per-pair ratios (goldboard / lean;
goal <= 1.2) and the median time of a fully cached rerun of goldboard (every answer on disk, no
request sent; goal <= 2 s), each also as measured inside the process (imports excluded).

The server: by default a fake OpenAI-compatible server on loopback in its own process (a
ThreadingHTTPServer answering every request after ``--delay`` seconds with a valid JSON answer):
the real local model (Gemma 3 270M on llama-cpp-python's server) takes seconds per answer on this
machine, so 200 items would take tens of minutes per run and the client's overhead would vanish
in the noise; the fake server's fixed delay is the hard case for the ratio. ``--base-url`` runs
against a real server instead. Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAKE_SERVER = """\
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DELAY = float(sys.argv[1])
ANSWER = json.dumps({"rationale": "fine", "safety_label": "Supported"})


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send({"data": [{"id": "fake-model"}]})

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(DELAY)
        self._send({"model": "fake-model", "choices": [{"message": {"content": ANSWER}}],
                    "usage": {"prompt_tokens": 300, "completion_tokens": 20}})


ThreadingHTTPServer.daemon_threads = True
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_port, flush=True)
srv.serve_forever()
"""

LEAN = """\
import json, sys
from concurrent.futures import ThreadPoolExecutor
import httpx

base_url, bodies_path, out_path, concurrency = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
bodies = [json.loads(line) for line in open(bodies_path, encoding="utf-8")]
limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
client = httpx.Client(base_url=base_url, timeout=600, limits=limits)


def one(body):
    return client.post("/chat/completions", json=body).json()["choices"][0]["message"]["content"]


with ThreadPoolExecutor(concurrency) as pool, open(out_path, "w", encoding="utf-8") as out:
    for text in pool.map(one, bodies):
        out.write(json.dumps(text) + "\\n")
"""

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information", "Unsafe"]


def goldboard(*args: str, cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    code = "import sys; from goldboard.cli import main; sys.argv[0] = 'goldboard'; main()"
    res = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"goldboard {' '.join(args)} failed:\n{res.stdout}{res.stderr}")
    return took, res.stdout + res.stderr


def build_study(root: Path, n: int) -> Path:
    table = root / "ratings.csv"
    with open(table, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "a", "b"])
        w.writerows([f"B{i:04d}", LABELS[i % 5], LABELS[(i * 7) % 5]] for i in range(n))
    s = root / "study"
    goldboard("study", "init", str(s), "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", cwd=root)
    goldboard("pull", "--study", str(s), "--from-table", str(table), "--item-col", "item", "--rater-cols",
              "onc_a=a,onc_b=b", "--field", "safety_label", cwd=root)  # fmt: skip
    units = s / "units.jsonl"
    recs = [json.loads(line) for line in units.read_text().splitlines()]
    for r in recs:
        r["case_text"] = f"Patient {r['item_id']} with stage IV NSCLC, EGFR exon 19 deletion, ECOG 1; osimertinib."
    units.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return s


def dump_bodies(study: Path, opts: argparse.Namespace, out: Path) -> int:
    """goldboard's own request bodies (the prompts it renders), for the lean script."""
    from goldboard.study import Study
    from goldboard.workflows.judge_run import load_template, plan_requests, round_units

    st = Study.open(study)
    number, units = round_units(st, None)
    tmpl, thash = load_template(None)
    params = {"model": opts.model, "temperature": 0.0, "seed": 0, "max_tokens": 256, "template": thash,
              "response_format": opts.response_format}  # fmt: skip
    reqs = plan_requests(st, units, st.round(number).guideline_version, tmpl, thash, params, 1)
    out.write_text("".join(json.dumps(r["body"]) + "\n" for r in reqs), encoding="utf-8")
    return len(reqs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--delay", type=float, default=0.1, help="the fake server's seconds per answer")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--base-url", default=None, help="a real OpenAI-compatible server (default: the fake one)")
    ap.add_argument("--model", default="fake-model")
    ap.add_argument("--response-format", default="json_schema")
    opts = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    root = Path(tempfile.mkdtemp(prefix="bench_judge_"))
    server = None
    try:
        if opts.base_url is None:
            (root / "server.py").write_text(FAKE_SERVER)
            server = subprocess.Popen([sys.executable, str(root / "server.py"), str(opts.delay)],
                                      stdout=subprocess.PIPE, text=True)  # fmt: skip
            url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        else:
            url = opts.base_url
        base = build_study(root, opts.items)
        bodies = root / "bodies.jsonl"
        n = dump_bodies(base, opts, bodies)
        (root / "lean.py").write_text(LEAN)
        lean_cmd = [sys.executable, str(root / "lean.py"), url, str(bodies), str(root / "lean_out.jsonl"),
                    str(opts.concurrency)]  # fmt: skip
        run = ["judge", "run", "--judge", "bench", "--model", opts.model, "--base-url", url, "--concurrency",
               str(opts.concurrency), "--response-format", opts.response_format, "--no-progress"]  # fmt: skip
        subprocess.run(lean_cmd, check=True)  # warm-up: the server's and the OS's caches
        lean_t, gb_t, ratios, inner = [], [], [], []
        for p in range(opts.pairs):
            t0 = time.perf_counter()
            subprocess.run(lean_cmd, check=True)
            lean_t.append(time.perf_counter() - t0)
            s = root / f"run{p}"
            shutil.copytree(base, s)
            took, out = goldboard(*run, "--study", str(s), cwd=root)
            if f"{n} requests sent" not in out:
                sys.exit(f"goldboard did not send {n} requests:\n{out}")
            gb_t.append(took)
            ratios.append(took / lean_t[-1])
        cached = []
        for _ in range(3):
            took, out = goldboard(*run, "--study", str(root / "run0"), cwd=root)
            if "0 requests sent" not in out:
                sys.exit(f"the cached rerun sent requests:\n{out}")
            cached.append(took)
        inner = _in_process(root / "run0", url, opts)
        where = f"fake loopback server ({opts.delay:g} s per answer)" if server else f"{url} ({opts.model})"
        print(f"{n} items, concurrency {opts.concurrency}, {where}, {opts.pairs} pairs (whole processes):")
        print(
            f"  lean script        median {statistics.median(lean_t):6.2f} s  ({', '.join(f'{t:.2f}' for t in lean_t)})"
        )
        print(f"  goldboard judge run median {statistics.median(gb_t):6.2f} s  ({', '.join(f'{t:.2f}' for t in gb_t)})")
        print(f"  ratio goldboard / lean: median {statistics.median(ratios):.2f}x (goal <= 1.2x)")
        print(
            f"  fully cached rerun: median {statistics.median(cached):.2f} s (goal <= 2 s; {', '.join(f'{t:.2f}' for t in cached)})"
        )
        print(f"  inside the process (imports excluded): run_judge cached {inner:.2f} s")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def _in_process(study: Path, url: str, opts: argparse.Namespace) -> float:
    from goldboard.workflows.judge_run import run_judge

    t0 = time.perf_counter()
    run_judge(study, judge="bench", model=opts.model, base_url=url, concurrency=opts.concurrency,
              response_format=opts.response_format)  # fmt: skip
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
