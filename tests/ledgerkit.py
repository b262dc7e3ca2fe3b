"""Hand-built ledgers shaped like the keeper writes them — for the pure checks, independent of the core verbs."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from priors.core.canonical import dumps, sha12

CONCLUSION = {
    "scope": "content-hash",
    "activation": "verify-phase",
    "obligation": "disposition-required",
    "authority": "advisory",
    "lifecycle": "stale-on-scope-change",
}
BEHAVIORAL = {
    "scope": "tool-version",
    "activation": "run-start",
    "obligation": "inject-as-instruction",
    "authority": "advisory",
    "lifecycle": "challenged-on-failure",
}


def prior(pid: str, run: str, claim: str = "", ns: str = "web", ref: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
    rec = {
        "t": "prior",
        "id": pid,
        "ns": ns,
        "type": "conclusion",
        "facets": dict(CONCLUSION),
        "scope_ref": ref or f"src/{pid.lower()}.py",
        "scope_hash": "aaaaaaaaaaaa",
        "claim": claim or f"claim of {pid}",
        "born": run,
    }
    rec.update(extra)
    return rec


def disp(pid: str, run: str, to: str, **extra: Any) -> Dict[str, Any]:
    rec = {"t": "event", "id": pid, "action": "disposition", "to": to, "run": run, "by": "agent"}
    rec.update(extra)
    return rec


def missing(pid: str, run: str) -> Dict[str, Any]:
    return {"t": "event", "id": pid, "action": "scope-missing", "run": run}


def decide(pid: str, to: str, reason: Optional[str] = None) -> Dict[str, Any]:
    rec = {"t": "event", "id": pid, "action": "decide", "to": to, "by": "human"}
    if reason is not None:
        rec["reason"] = reason
    return rec


def call(run: str, n: int, against: str, ns: str = "web") -> Dict[str, Any]:
    return {"t": "call", "call_id": f"{run}-C-{n:02d}", "kind": "reversal", "run": run, "ns": ns,
            "conflicts_with": against, "claim": f"reverse {against}", "direction": "expand"}


def commit(run: str, ns: str = "web") -> Dict[str, Any]:
    return {"t": "run", "action": "commit", "run": run, "ns": ns, "summary": [f"sealed {run}"]}


def redact(records: List[Dict[str, Any]], pid: str, reason: str = "secret") -> List[Dict[str, Any]]:
    """The sanctioned rewrite (contract §7 redact) applied to a record list, plus its redact event."""
    out = []
    for r in records:
        if r.get("t") == "prior" and r.get("id") == pid and not r.get("redacted"):
            r = {"t": "prior", "id": pid, "ns": r["ns"], "redacted": True, "content_hash": sha12(dumps(r)), "born": r["born"]}
        elif r.get("t") == "event" and r.get("id") == pid and "reason" in r:
            r = dict({k: v for k, v in r.items() if k != "reason"}, reason_redacted=True, reason_hash=sha12(r["reason"]))
        elif r.get("t") == "call" and r.get("conflicts_with") == pid and not r.get("redacted"):
            r = {k: r[k] for k in ("t", "call_id", "kind", "run", "ns", "conflicts_with")}
            r["redacted"] = True
        out.append(r)
    out.append({"t": "event", "id": pid, "action": "redact", "by": "human", "reason": reason})
    return out


def to_bytes(records: List[Dict[str, Any]]) -> bytes:
    return "".join(dumps(r) + "\n" for r in records).encode("utf-8")


def sample() -> List[Dict[str, Any]]:
    """Three runs of namespace web: birth, fixes and carries, a quiet run."""
    return [
        prior("P-0001", "run-001"),
        prior("P-0002", "run-001"),
        prior("P-0003", "run-001"),
        commit("run-001"),
        disp("P-0001", "run-002", "fixed"),
        disp("P-0002", "run-002", "still-open"),
        disp("P-0003", "run-002", "stale"),
        commit("run-002"),
        decide("P-0002", "wontfix", "we like it"),
        disp("P-0003", "run-003", "still-open"),
        commit("run-003"),
    ]
