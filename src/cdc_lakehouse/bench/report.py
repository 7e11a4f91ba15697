"""The benchmark's report: ``results.json`` (everything measured), ``results.md`` (the tables
the README shows), ``throughput.png`` and ``cost_growth.png``.

Ratios are times: pipeline seconds / baseline seconds on the same events (so 1.5 means the
pipeline takes 1.5 times as long; below 1 it is faster). Targets (issue 7): the pipeline's
bronze -> gold within 1.5x of the hand-written PySpark script; the incremental build at the
largest history within 1.25x of the one at 1x, while the full build grows with history.
"""

from __future__ import annotations

import json
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

PYSPARK_TARGET = 1.5
GROWTH_TARGET = 1.25
STAGES = ("dump_to_bronze", "bronze_to_silver", "silver_to_gold", "bronze_to_gold")
STAGE_LABELS = {
    "dump_to_bronze": "dump → bronze",
    "bronze_to_silver": "bronze → silver",
    "silver_to_gold": "silver → gold",
    "bronze_to_gold": "bronze → gold",
    "incremental_batch": "incremental batch",
}
BASELINES = ("pyspark", "duckdb", "python_floor")
BASELINE_LABELS = {
    "pyspark": "PySpark script",
    "duckdb": "DuckDB",
    "python_floor": "orjson / fastavro floor",
}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """What the numbers were measured on: CPU, cores, memory, OS and library versions."""
    versions = {}
    for package in ("pyspark", "dbt-core", "dbt-spark", "duckdb", "orjson", "fastavro"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "spark_driver_memory": os.environ.get("CDC_SPARK_DRIVER_MEMORY", "4g"),
    }


def pyspark_ratio(result: dict[str, Any]) -> float | None:
    """Pipeline bronze -> gold seconds / the PySpark script's seconds (None if unchecked)."""
    baseline = result["baselines"].get("pyspark")
    if not baseline or not baseline["equals_gold"] or not baseline["seconds"]:
        return None
    return result["stages"]["bronze_to_gold"]["seconds"] / baseline["seconds"]


def summary(document: dict[str, Any]) -> dict[str, Any]:
    """The targets, met or not: per-format and overall PySpark ratios, growth ratios."""
    out: dict[str, Any] = {}
    formats = document["formats"]
    if formats:
        ratios = {r["format"]: pyspark_ratio(r) for r in formats}
        checked = [r for r in formats if ratios[r["format"]] is not None]
        pipeline_s = sum(r["stages"]["bronze_to_gold"]["seconds"] for r in checked)
        baseline_s = sum(r["baselines"]["pyspark"]["seconds"] for r in checked)
        overall = pipeline_s / baseline_s if baseline_s else None
        out["pyspark_ratio_by_format"] = {k: _round(v) for k, v in ratios.items()}
        out["pyspark_ratio_overall"] = _round(overall)
        out["pyspark_target"] = PYSPARK_TARGET
        out["pyspark_target_met"] = overall is not None and overall <= PYSPARK_TARGET
        out["baselines_equal_gold"] = all(
            b["equals_gold"] for r in formats for b in r["baselines"].values()
        )
        out["gold_equals_oracle"] = all(r["gold_equals_oracle"] for r in formats)
    growth = sorted(document["growth"], key=lambda r: r["factor"])
    if len(growth) >= 2:
        first, last = growth[0], growth[-1]
        incremental = last["incremental_build_s"] / first["incremental_build_s"]
        full = last["full_build_s"] / first["full_build_s"]
        out["incremental_growth"] = _round(incremental)
        out["full_build_growth"] = _round(full)
        out["growth_target"] = GROWTH_TARGET
        out["growth_target_met"] = incremental <= GROWTH_TARGET and full > incremental
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _eps(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _mib(value: int) -> str:
    return f"{value / 2**20:,.0f}"


def format_line(result: dict[str, Any]) -> str:
    """One progress line for a measured format."""
    stages = result["stages"]
    ratio = pyspark_ratio(result)
    return (
        f"{result['format']}: {result['events']:,} events; "
        + ", ".join(f"{STAGE_LABELS[s]} {stages[s]['seconds']:.1f} s" for s in STAGES)
        + f"; PySpark script {result['baselines']['pyspark']['seconds']:.1f} s"
        + (f" (ratio {ratio:.2f})" if ratio is not None else " (differs from gold)")
    )


def growth_line(result: dict[str, Any]) -> str:
    """One progress line for a measured history size."""
    return (
        f"growth {result['factor']}x ({result['events']:,} events): full build "
        f"{result['full_build_s']:.1f} s, incremental build of {result['batch_events']:,} "
        f"events {result['incremental_build_s']:.1f} s"
    )


def markdown(document: dict[str, Any]) -> str:
    """The report's Markdown: machine, throughput per stage, baselines, cost growth."""
    m = document["machine"]
    c = document["config"]
    s = document.get("summary") or summary(document)
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}; "
        f"Python {m['python']}, PySpark {m['versions']['pyspark']}, "
        f"dbt-core {m['versions']['dbt-core']}, DuckDB {m['versions']['duckdb']}; "
        f"Spark driver memory {m['spark_driver_memory']}, `local[*]`, table format parquet.",
        "",
        f"Workload (change simulator, seed {c['seed']}): {c['changes']:,} row changes of "
        f"history per format, then an incremental batch of {c['batch_changes']:,}; 5 % "
        "producer-retry duplicates, 3 partitions. Events = rows of `silver.change_events` "
        f"(duplicates included). Whole run: {document.get('wall_s', 0):.0f} s.",
        "",
    ]
    if document["formats"]:
        lines += [
            "## Throughput per stage (events/s; peak RSS of the JVM and Python, MiB)",
            "",
            "| format | events | dump → bronze | bronze → silver | silver → gold | "
            "bronze → gold | incremental batch (events, s) | peak RSS |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in document["formats"]:
            st = r["stages"]
            inc = st["incremental_batch"]
            peak = max(st[name]["peak_rss_bytes"] for name in st)
            lines.append(
                f"| {r['format']} | {r['events']:,} | "
                + " | ".join(_eps(st[name]["events_per_s"]) for name in STAGES)
                + f" | {inc['events']:,} in {inc['seconds']:.1f} | {_mib(peak)} |"
            )
        lines += [
            "",
            "## Bronze → gold against baselines on the same bronze bytes",
            "",
            "Time ratio = pipeline seconds / baseline seconds (lower is better for the "
            "pipeline). Every baseline's result was compared with the pipeline's gold (keys, "
            "and the integer and string columns) before its time was counted; ✗ marks one "
            "that differed.",
            "",
            "| format | pipeline s | PySpark script s (ratio) | DuckDB s (ratio) | "
            "orjson / fastavro floor s (ratio) |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in document["formats"]:
            pipeline_s = r["stages"]["bronze_to_gold"]["seconds"]
            cells = []
            for name in BASELINES:
                b = r["baselines"][name]
                mark = "" if b["equals_gold"] else " ✗"
                ratio = pipeline_s / b["seconds"] if b["seconds"] else float("nan")
                cells.append(f"{b['seconds']:.2f} ({ratio:.1f}x){mark}")
            lines.append(f"| {r['format']} | {pipeline_s:.1f} | " + " | ".join(cells) + " |")
        verdict = "met" if s.get("pyspark_target_met") else "NOT met"
        lines += [
            "",
            f"All formats: pipeline / PySpark script = {s.get('pyspark_ratio_overall')} "
            f"(target ≤ {PYSPARK_TARGET}: {verdict}).",
            "",
        ]
    if document["growth"]:
        growth = sorted(document["growth"], key=lambda r: r["factor"])
        base = growth[0]
        lines += [
            f"## Cost growth ({c['growth_format']}, new batch of {c['growth_batch_changes']:,} "
            "row changes, whole `dbt build`)",
            "",
            "| history | events | full build s (x 1x) | incremental build s (x 1x) |",
            "|---|---:|---:|---:|",
        ]
        for r in growth:
            lines.append(
                f"| {r['factor']}x | {r['events']:,} | {r['full_build_s']:.1f} "
                f"({r['full_build_s'] / base['full_build_s']:.2f}) | "
                f"{r['incremental_build_s']:.1f} "
                f"({r['incremental_build_s'] / base['incremental_build_s']:.2f}) |"
            )
        verdict = "met" if s.get("growth_target_met") else "NOT met"
        lines += [
            "",
            f"Incremental at {growth[-1]['factor']}x / 1x = {s.get('incremental_growth')} "
            f"(target ≤ {GROWTH_TARGET}: {verdict}); full build {s.get('full_build_growth')}.",
            "",
        ]
        for key, label in (
            ("incremental_build_nodes", "incremental build"),
            ("full_build_nodes", "full build"),
        ):
            nodes = growth[-1].get(key)
            if not nodes:
                continue
            by_type = ", ".join(f"{k} {v:.0f} s" for k, v in nodes["seconds_by_type"].items())
            slowest = ", ".join(f"{k} {v:.1f} s" for k, v in nodes["slowest"].items())
            lines += [
                f"Where the {label} at {growth[-1]['factor']}x spends its time "
                f"({nodes['nodes']} dbt nodes): {by_type}; slowest: {slowest}.",
                "",
            ]
    return "\n".join(lines)


def plot_throughput(document: dict[str, Any], path: Path) -> None:
    """Bars of events/s per format: each pipeline stage and each baseline (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = document["formats"]
    series = [
        (STAGE_LABELS[s], [r["stages"][s]["events_per_s"] or 0 for r in results]) for s in STAGES
    ]
    series += [
        (BASELINE_LABELS[b], [r["baselines"][b]["events_per_s"] or 0 for r in results])
        for b in BASELINES
    ]
    fig, ax = plt.subplots(figsize=(12, 5))
    width = 0.8 / len(series)
    for index, (label, values) in enumerate(series):
        positions = [x + index * width for x in range(len(results))]
        ax.bar(positions, values, width, label=label, hatch="//" if index >= len(STAGES) else None)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(results))])
    ax.set_xticklabels([r["format"] for r in results], rotation=20, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("events / s (log)")
    ax.set_title(f"Throughput per stage and baselines ({document['machine']['cores']} cores)")
    ax.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_growth(document: dict[str, Any], path: Path) -> None:
    """Full build and incremental build seconds against history size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    growth = sorted(document["growth"], key=lambda r: r["factor"])
    events = [r["events"] for r in growth]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(events, [r["full_build_s"] for r in growth], "o-", label="full build")
    ax.plot(events, [r["incremental_build_s"] for r in growth], "s-", label="incremental build")
    for r in growth:
        ax.annotate(
            f"{r['factor']}x",
            (r["events"], r["full_build_s"]),
            textcoords="offset points",
            xytext=(4, 4),
        )
    ax.set_xlabel("history (events in silver.change_events)")
    ax.set_ylabel("dbt build seconds")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Cost growth, {document['config']['growth_format']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(document: dict[str, Any], out: Path) -> list[Path]:
    """Write ``results.json``, ``results.md`` and the plots into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    document["summary"] = summary(document)
    paths = [out / "results.json", out / "results.md"]
    paths[0].write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(document), encoding="utf-8")
    if document["formats"]:
        paths.append(out / "throughput.png")
        plot_throughput(document, paths[-1])
    if len(document["growth"]) >= 2:
        paths.append(out / "cost_growth.png")
        plot_growth(document, paths[-1])
    return paths
