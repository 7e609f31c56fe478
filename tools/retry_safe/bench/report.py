"""results.md and results.png from the raw JSON files under docs/benchmarks/raw/.

`default-<format>.json` hold the main run; any other label (e.g. a 30M-row run) is shown as a
scaling comparison of the contenders it measured, a run on a cluster against its embedded twin,
and a run on a bucket (`<label>-s3`) against its twin on local disk (`<label>-local`). docs/benchmarks/notes.md, written by hand
after a run, is linked as the analysis.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from retry_safe.bench.settings import CASES, LABELS, SPLIT

MB = 1_000_000


def load(out_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """label -> format -> raw run (age.json, `make bench-age`'s, is read by age())."""
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted((out_dir / "raw").glob("*.json")):
        if path.name.startswith("age"):  # age.json, age-listing.json: age() reads them
            continue
        raw = json.loads(path.read_text())
        s = raw["settings"]
        runs.setdefault(s["label"], {})[s["table_format"]] = raw
    return runs


def find(raw: dict[str, Any], contender: str, case: str, storage: str = "cow") -> dict | None:
    for r in raw["records"]:
        if (r["contender"], r["case"], r["storage"]) == (contender, case, storage):
            return r
    return None


def paired(raw: dict[str, Any], twin: dict[str, Any]) -> Iterator[tuple[dict, dict]]:
    """Each record of raw, with the record of twin (another run) of the same contender, case
    and storage, where twin has one."""
    for r in raw["records"]:
        ref = find(twin, r["contender"], r["case"], r["storage"])
        if ref:
            yield r, ref


def times(r: dict[str, Any]) -> str:
    """A record's median wall and engine seconds, as the tables print them."""
    return f"{r['median_s']:.2f} / {r['engine_median_s']:.2f}"


def against_job(r: dict[str, Any], job: dict[str, Any]) -> tuple[str, str, str, str]:
    """The cells comparing the model's record with the job's of the same run: the job's median
    seconds, the ratios of the model's wall and engine time to it, and each side's files
    removed and added."""
    m, j = r["metrics"], job["metrics"]
    return (
        f"{job['median_s']:.2f}",
        f"{ratio(r['median_s'], job['median_s'])} / {ratio(r['engine_median_s'], job['median_s'])}",
        f"-{m['files_removed']} +{m['files_added']}",
        f"-{j['files_removed']} +{j['files_added']}",
    )


def other_heap(label: str) -> bool:
    """A run on another heap than the profile's (`mem-*`): it answers the memory question only."""
    return label.startswith("mem-")


def unchanged_rows(r: dict[str, Any]) -> int:
    """Rows written into new data files although neither new nor changed."""
    return max(r["metrics"]["rows_written"] - r["expected"]["changed"], 0)


def row_line(fmt: str, r: dict[str, Any]) -> str:
    m = r["metrics"]
    engine = (
        f"{r['engine_median_s']:.2f}"
        if r["contender"] in ("idempotent_merge", "stock_merge", "audited")
        else "="
    )
    files = f"-{m['files_removed']} / +{m['files_added']}"
    if m["delete_files_added"]:
        files += f" (+{m['delete_files_added']} delete files / DVs)"
    return (
        f"| {fmt} | {r['storage'].upper()} | {LABELS[r['contender']]} | {r['case']} "
        f"| {r['median_s']:.2f} ({r['min_s']:.2f}–{r['max_s']:.2f}) | {engine} "
        f"| {'yes' if r['committed'] else 'no'} | {files} "
        f"| -{m['bytes_removed'] / MB:.2f} / +{m['bytes_added'] / MB:.2f} "
        f"| {unchanged_rows(r):,} | {r['check']} |"
    )


def results_table(runs: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| format | storage | contender | case | wall s, median (min–max) | engine s (dbt node execute) "
        "| new version | data files removed / added | MB removed / added "
        "| rows rewritten unchanged | final rows |",
        "| --- | --- | --- | --- | ---: | ---: | --- | --- | --- | ---: | --- |",
    ]
    for fmt, raw in runs.items():
        lines += [row_line(fmt, r) for r in raw["records"]]
    return lines


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "n/a"


def targets(runs: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for fmt, raw in runs.items():
        im_a, im_b = find(raw, "idempotent_merge", "a"), find(raw, "idempotent_merge", "b")
        job_b, ref_b = find(raw, "pyspark_job", "b"), find(raw, "reference_merge", "b")
        if im_a:
            m = im_a["metrics"]
            ok = not im_a["committed"] and m["files_added"] == m["files_removed"] == 0
            lines.append(
                f"- **{fmt}, (a) retry**: {'met' if ok else 'MISSED'}: "
                f"{m['files_removed']} files rewritten, "
                f"{'a new version' if im_a['committed'] else 'no new version'}."
            )
        if im_b:
            m = im_b["metrics"]
            ok = m["files_removed"] <= im_b["affected_files"] or m["delete_files_added"]
            lines.append(
                f"- **{fmt}, (b) files**: {'met' if ok else 'MISSED'}: {m['files_removed']} data "
                f"files rewritten; {im_b['affected_files']} files hold a changed or deleted key "
                f"(of {raw['table_sizes'][im_b['table']]['files']} in the table)."
            )
        if im_b and job_b:
            inv, eng = (
                im_b["median_s"] / job_b["median_s"],
                im_b["engine_median_s"] / job_b["median_s"],
            )
            lines.append(
                f"- **{fmt}, (b) within 1.2× of (4)**: dbt invocation {inv:.2f}× "
                f"({'met' if inv <= 1.2 else 'missed'}), engine work {eng:.2f}× "
                f"({'met' if eng <= 1.2 else 'missed'})."
            )
        if im_b and ref_b:
            inv, eng = (
                ref_b["median_s"] / im_b["median_s"],
                ref_b["median_s"] / im_b["engine_median_s"],
            )
            lines.append(
                f"- **{fmt}, (b) ≥ 4× faster than (3)**: dbt invocation {inv:.2f}× "
                f"({'met' if inv >= 4 else 'missed'}), engine work {eng:.2f}× "
                f"({'met' if eng >= 4 else 'missed'})."
            )
    return lines


# Issue 27's targets for the audited publish of case (b), against the direct idempotent_merge.
AUDITED_LIMITS = {"iceberg": 1.3, "delta": 1.5}


def audited(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The audited publish against the direct MERGE, in every run (label) that measured both."""
    lines = []
    for label, by_format in runs.items():
        for fmt, raw in by_format.items():
            found = audited_target(fmt, raw)
            if found:
                lines += [f"Run `{label}`, {fmt}:", "", *found, ""]
    return lines[:-1]  # blank lines between the runs; write() ends the section


def audited_target(fmt: str, raw: dict[str, Any]) -> list[str]:
    """(5) against (1) on case (b): the staging and the publish against the direct MERGE (the
    test reads the stage and would run in a direct build too: shown apart), and the files each
    rewrote."""
    direct, audited = find(raw, "idempotent_merge", "b"), find(raw, "audited", "b")
    if not (direct and audited):
        return []
    limit = AUDITED_LIMITS[fmt]
    engine = audited["engine_median_s"] / direct["engine_median_s"]
    d, a = direct["metrics"], audited["metrics"]
    same_files = (a["files_removed"], a["files_added"]) == (d["files_removed"], d["files_added"])
    return [
        f"- **{fmt}, (b) audited within {limit}× of direct**: staging + publish "
        f"(medians) {audited['stage_s_median']:.2f} + {audited['publish_s_median']:.2f} s against the "
        f"direct MERGE's {direct['engine_median_s']:.2f} s: {engine:.2f}× "
        f"({'met' if engine <= limit else 'missed'}); the data test on the stage "
        f"{audited['test_s_median']:.2f} s; whole `dbt build` "
        f"{ratio(audited['median_s'], direct['median_s'])} the direct `dbt run`.",
        f"- **{fmt}, (b) audited files**: {'met' if same_files else 'MISSED'}: "
        f"-{a['files_removed']} / +{a['files_added']} data files, the direct MERGE "
        f"-{d['files_removed']} / +{d['files_added']}.",
    ]


def cli_table(runs: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| format | end to end, startup included | median s (min–max) |",
        "| --- | --- | ---: |",
    ]
    for fmt, raw in runs.items():
        for name, t in (raw.get("cli") or {}).get("runs", {}).items():
            lines.append(
                f"| {fmt} | {name} | {t['median_s']:.1f} ({t['min_s']:.1f}–{t['max_s']:.1f}) |"
            )
    return lines if len(lines) > 2 else []


def scaling(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    base = runs.get("default", {})
    lines = []
    # the sizes of the runs with rows in the table, and the default run's they are compared with
    compared = list(base.values())
    for label, by_format in runs.items():
        if label == "default" or other_heap(label):
            continue
        for fmt, raw in by_format.items():
            if elsewhere(raw) or same_size(raw, base.get(fmt)):
                continue
            for r, ref in paired(raw, base[fmt]) if fmt in base else ():
                compared.append(raw)
                size = f"{raw['settings']['days']} × {raw['settings']['rows_per_day']:,}"
                lines.append(
                    f"| {fmt} | {size} | {LABELS[r['contender']]} {r['storage'].upper()} "
                    f"| {r['case']} | {times(ref)} | {times(r)} "
                    f"| {ratio(r['median_s'], ref['median_s'])} / "
                    f"{ratio(r['engine_median_s'], ref['engine_median_s'])} | {r['check']} |"
                )
    if not lines:
        return []
    sizes = sorted(
        {
            f"{raw['settings']['days']} days × {raw['settings']['rows_per_day']:,} rows"
            for raw in compared
        }
    )
    return [
        f"Sizes compared: {'; '.join(sizes)}.",
        "",
        "| format | larger: days × rows a day | contender | case | default size: wall / engine s "
        "| larger: wall / engine s | ratio wall / engine | final rows |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *lines,
    ]


def size_sweep(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The model against the hand-written job at each interval size, every case with rows to
    merge, ratios within one run (the embedded runs on local disk of every label that measured
    both)."""
    rows = []
    for label, by_format in runs.items():
        # a bucket run's twin on local disk, the audited run and the runs on another heap size
        # answer other questions
        if label.endswith("-local") or label == "audited" or other_heap(label):
            continue
        for fmt, raw in by_format.items():
            if elsewhere(raw):
                continue
            for r in raw["records"]:
                job = find(raw, "pyspark_job", r["case"], r["storage"])
                # case (a) has nothing to merge: no size to compare
                if r["contender"] != "idempotent_merge" or r["storage"] != "cow" or not job:
                    continue
                if r["case"] != "a":
                    rows.append((raw["settings"], fmt, r, job))
    lines = []
    for s, fmt, r, job in sorted(
        rows, key=lambda x: (x[0]["rows_per_day"], x[1], x[0]["days"], x[2]["case"])
    ):
        job_s, ratios, model_files, job_files = against_job(r, job)
        lines.append(
            f"| {fmt} | {s['rows_per_day']:,} | {s['days']} | {r['case']} | {times(r)} "
            f"| {job_s} | {ratios} | {model_files} | {job_files} | {r['check']}, {job['check']} |"
        )
    if not lines:
        return []
    return [
        "Cases (b) and (c) (and (d) where a run measured it) of the embedded target at each "
        "interval size: the idempotent_merge "
        "model (`dbt run` in-process) against the hand-written job in the same JVM and run "
        "(medians; engine = the model node's execute time); the heap each needed is in the "
        "Memory table.",
        "",
        "| format | rows a day | days in the table | case | model: wall / engine s | job s "
        "| ratio wall / engine | files -/+ model | job | final rows: model, job |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *lines,
    ]


def on_s3(raw: dict[str, Any]) -> bool:
    return raw["settings"].get("warehouse", "local") == "s3"


def elsewhere(raw: dict[str, Any]) -> bool:
    """A run not embedded on local disk: on a cluster, on a bucket, or through a server."""
    return bool(raw["settings"].get("cluster")) or on_s3(raw) or raw.get("path") == "warm"


def same_size(raw: dict[str, Any], other: dict[str, Any] | None) -> bool:
    """Whether two runs measured tables of the same size (not a scaling comparison)."""
    if other is None:
        return False
    a, b = raw["settings"], other["settings"]
    return (a["days"], a["rows_per_day"]) == (b["days"], b["rows_per_day"])


def embedded_twin(runs: dict[str, dict[str, dict[str, Any]]], raw: dict[str, Any]) -> dict | None:
    """The embedded run of the same format and table size as a cluster run."""
    s = raw["settings"]
    for by_format in runs.values():
        other = by_format.get(s["table_format"])
        if other and not elsewhere(other):
            o = other["settings"]
            if (o["days"], o["rows_per_day"]) == (s["days"], s["rows_per_day"]):
                return other
    return None


def on_cluster(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Each cluster run's contenders against the same contenders embedded, same table size."""
    lines = []
    for by_format in runs.values():
        for fmt, raw in by_format.items():
            twin = raw["settings"].get("cluster") and embedded_twin(runs, raw)
            if not twin:
                continue
            for r, ref in paired(raw, twin):
                m, e = r["metrics"], ref["metrics"]
                lines.append(
                    f"| {fmt} | {raw['settings']['days'] * raw['settings']['rows_per_day']:,} "
                    f"| {LABELS[r['contender']]} | {r['case']} | {times(ref)} | {times(r)} "
                    f"| -{e['files_removed']} / +{e['files_added']} "
                    f"| -{m['files_removed']} / +{m['files_added']} | {r['check']} |"
                )
    if not lines:
        return []
    return [
        "The cluster target (`python -m retry_safe.bench all --cluster`): a Spark standalone "
        "master and one worker (2 cores) on this machine, the driver in the benchmark's process; "
        "the metastore is whatever LAKEHOUSE_METASTORE_URL names (PostgreSQL for the figures "
        "below, see notes). Embedded: the same size's run on the local target.",
        "",
        "| format | rows | contender | case | embedded: wall / engine s | cluster: wall / engine s "
        "| files removed / added, embedded | on the cluster | final rows |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *lines,
    ]


def on_object_storage(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Each run on a bucket against its twin on local disk (`bench storage`: label-s3 and
    label-local, one PostgreSQL metastore, one run)."""
    lines = []
    for label, by_format in runs.items():
        twin = runs.get(label.removesuffix("-s3") + "-local") if label.endswith("-s3") else None
        for fmt, raw in by_format.items():
            local = twin and twin.get(fmt)
            if not local:
                continue
            for r, ref in paired(raw, local):
                lines.append(
                    f"| {fmt} | {LABELS[r['contender']]} | {r['case']} | {times(ref)} | {times(r)} "
                    f"| {ratio(r['median_s'], ref['median_s'])} / "
                    f"{ratio(r['engine_median_s'], ref['engine_median_s'])} "
                    f"| +{ref['metrics']['files_added']} / {ref.get('objects_written', '-')} "
                    f"| +{r['metrics']['files_added']} / {r.get('objects_written', '-')} "
                    f"| {r['check']} |"
                )
    if not lines:
        return []
    return [
        "`python -m retry_safe.bench storage` (`make bench-storage`): each format on local disk, "
        "then in a bucket of a local S3-compatible server (S3Proxy on the same machine, through "
        "Hadoop's S3A connector), both on one PostgreSQL metastore; medians of the runs. "
        "*written*: the data files the commit added, and every object (file) the run wrote "
        "under the table's location: data files, and its commit's log or metadata files.",
        "",
        "| format | contender | case | local disk: wall / engine s | S3: wall / engine s "
        "| ratio wall / engine | written, local: data / all | on S3 | final rows |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *lines,
    ]


def memory(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The heap each contender needed, in every run that measured it (an embedded session:
    driver and executors in one JVM)."""
    lines = []
    for label, by_format in runs.items():
        for fmt, raw in by_format.items():
            for r in raw["records"]:
                if not r.get("heap"):
                    continue
                h = r["heap"]
                lines.append(
                    f"| {fmt} | {label} | {raw['settings']['rows_per_day']:,} "
                    f"| {LABELS[r['contender']]} {r['storage'].upper()} | {r['case']} "
                    f"| {h['peak_mb']:,} | {h['old_peak_mb']:,} | {h['max_mb']:,} |"
                )
    if not lines:
        return []
    return [
        "The JVM's heap during each run, the highest of its runs (MB; reset before each run): "
        "*peak*, the sum of the heap pools' peaks (an upper bound); *old generation*, what "
        "stayed live through collections; *max*, the heap's size (`spark.driver.memory`).",
        "",
        "| format | run | rows a day | contender | case | peak | old generation | max |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *lines,
    ]


def split(r: dict[str, Any]) -> str:
    """The median seconds of each part of a warm dbt run, in SPLIT's order."""
    return " / ".join(f"{r[f'{part}_median']:.2f}" for part in SPLIT)


def warm_path(runs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """`bench warm`: the model through the warm runner against the job through Spark Connect,
    both on one running server, per size and case."""
    lines = []
    for by_format in runs.values():
        for fmt, raw in by_format.items():
            if raw.get("path") != "warm":
                continue
            for r in raw["records"]:
                job = find(raw, "pyspark_job", r["case"])
                if r["contender"] != "idempotent_merge" or not job:
                    continue
                job_s, ratios, model_files, job_files = against_job(r, job)
                lines.append(
                    f"| {fmt} | {raw['settings']['rows_per_day']:,} | {r['case']} | {times(r)} "
                    f"| {job_s} | {ratios} | {split(r)} | {model_files} | {job_files} "
                    f"| {r['check']}, {job['check']} |"
                )
    if not lines:
        return []
    return [
        "`python -m retry_safe.bench warm` (`make bench-warm`): one running lakehouse server per "
        "format (30 days of the row count below, the same tables and cases as above). The model: "
        "`lakehouse dbt run` through the warm runner on the server target, wall time from the "
        "client's start to its exit, engine = the model node's execute time. The job: the "
        "hand-written job's code (`retry_safe.bench.job`) sent through Spark Connect from a "
        "warm client, its wall time. Medians of 3 runs, each on the table reset to its base "
        "version, after one untimed run of each. *split*: the model's wall time by dbt's own "
        "log: dbt's own work (client, runner, parse, compile, Jinja) / the checks (staged rows, "
        "source profile) / the change set (computed and counted) / the MERGE / other statements "
        "(schema, commit report, ledger).",
        "",
        "| format | rows a day | case | model: wall / engine s | job s | ratio wall / engine "
        "| split s: dbt / checks / change set / MERGE / other | files -/+ model | job "
        "| final rows: model, job |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *lines,
    ]


def setup(runs: dict[str, dict[str, Any]]) -> list[str]:
    raw = next(iter(runs.values()))
    s, m, v = raw["settings"], raw["machine"], raw["versions"]
    size = raw["table_sizes"][raw["records"][0]["table"]]
    return [
        f"Machine: {m['nproc']} cores ({m['cpu']}), {m['memory_gib']} GiB, {m['os']}, "
        f"Python {m['python']}, Java {v['java']}.",
        f"Versions: pyspark {v['pyspark']}, dbt-core {v['dbt-core']}, dbt-spark {v['dbt-spark']}, "
        f"delta-spark {v['delta-spark']}, jars: "
        + ", ".join(_jars(r["versions"]) for r in runs.values())
        + ".",
        f"Table: {s['days']} days × {s['rows_per_day']:,} rows = {s['days'] * s['rows_per_day']:,} "
        f"rows, partitioned by day, {s['files_per_day']} files per day "
        f"({size['files']} files, {size['bytes'] / MB:.1f} MB on Delta). Re-merged day: {raw['day']}. "
        f"{s['reps']} timed runs per cell after one untimed warm-up run per contender, "
        "each on the table reset to the same base version.",
        "Cases: "
        + "; ".join(f"({k}) {CASES[k].title}" for k in sorted({r["case"] for r in raw["records"]}))
        + ".",
    ]


def _jars(versions: dict[str, str]) -> str:
    # runs recorded before the jars were installed at `make install` name spark.jars.packages
    return versions.get("jars") or versions.get("spark.jars.packages", "")


def chart(runs: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    fig, axes = pyplot.subplots(1, len(runs), figsize=(7 * len(runs), 4.8), squeeze=False)
    for ax, (fmt, raw) in zip(axes[0], runs.items(), strict=True):
        series = sorted(
            {(r["contender"], r["storage"]) for r in raw["records"]},
            key=lambda k: (list(LABELS).index(k[0]), k[1]),
        )
        cases = sorted({r["case"] for r in raw["records"]})
        width = 0.8 / len(series)
        for i, (contender, storage) in enumerate(series):
            found = [find(raw, contender, c, storage) for c in cases]
            xs = [j + i * width for j, r in enumerate(found) if r]
            rs = [r for r in found if r]
            errors = [
                [r["median_s"] - r["min_s"] for r in rs],
                [r["max_s"] - r["median_s"] for r in rs],
            ]
            label = LABELS[contender] + (" MoR" if storage == "mor" else "")
            ax.bar(xs, [r["median_s"] for r in rs], width, yerr=errors, label=label)
            if contender in ("idempotent_merge", "stock_merge"):
                engine = [r["engine_median_s"] for r in rs]
                ax.bar(xs, engine, width, fill=False, hatch="//", edgecolor="white", linewidth=0)
        ax.set_xticks(
            [j + 0.4 - width / 2 for j in range(len(cases))],
            [f"({c}) {CASES[c].title}" for c in cases],
            fontsize=7,
        )
        ax.set_title(f"{fmt}: re-merge one day (median, min–max; hatched = engine work)")
        ax.set_ylabel("seconds")
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot.close(fig)


def age(path: Path) -> list[str]:
    """The age benchmark's table (retry_safe.bench.age, `make bench-age`)."""
    from retry_safe.bench.age import MAINTAIN_EVERY, RUNS, summary

    raw = json.loads(path.read_text())
    return [
        f"Measured {raw['measured_at']} by `make bench-age` (`tools/retry_safe/bench/age.py`: "
        "a table of 100 rows a day grown to each age one commit and one ledger row a day, then "
        f"{RUNS} real `dbt run`s of the next days and {RUNS} `lakehouse intervals`, warm "
        f"session; maintained: `lakehouse maintain` after every {MAINTAIN_EVERY}th interval).",
        "",
        *summary(raw["results"]),
        *listings(path.with_name("age-listing.json")),
    ]


def listings(path: Path) -> list[str]:
    """The listing-only run's table (`python -m retry_safe.bench.age --listing-only`), if any."""
    if not path.exists():
        return []
    from retry_safe.bench.age import RUNS, listing_summary

    raw = json.loads(path.read_text())
    return [
        "",
        f"`lakehouse intervals` on a ledger never maintained, measured {raw['measured_at']} by "
        "`python -m retry_safe.bench.age --listing-only`: the ledger grown one row a day with "
        f"the adapter's own compaction check after each write, no data commit (the listing "
        f"reads the ledger table alone), then {RUNS} listings.",
        "",
        *listing_summary(raw["results"]),
    ]


def write(out_dir: Path) -> str:
    runs = load(out_dir)
    main = runs.get("default")
    if not main:
        raise SystemExit(f"no default-*.json under {out_dir / 'raw'}: run the benchmark first")
    chart(main, out_dir / "results.png")
    lines = [
        "# Benchmark: re-merging one day",
        "",
        f"Written by `make bench` ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC) from `raw/*.json`; "
        "the analysis, written by hand from the runs, is [notes.md](notes.md).",
        "",
        *setup(main),
        "",
        "![results](results.png)",
        "",
        "## Results",
        "",
        "Wall time is the whole contender: for (1) and (2) one in-process `dbt run` "
        "(dbtRunner: parse, compile, every statement); *engine s* is the node's execute step "
        "from dbt's run results (the SQL statements alone). (3) and (4) are `spark.sql` / "
        "DataFrame calls in the same JVM, so engine = wall. *rows rewritten unchanged* = rows "
        "written into new data files minus the rows the case really changes (Delta: the MERGE's "
        "copied + updated + inserted rows; Iceberg: the snapshot's added-records). "
        "*final rows*: the re-merged day compared with the source day by its rows' count and "
        "two sums of row hashes (by exceptAll in both directions when they differ, to say how), "
        "every other day by count and checksum against the base table.",
        "",
        *results_table(main),
        "",
        "## Targets",
        "",
        *targets(main),
        "",
    ]
    aged = out_dir / "raw" / "age.json"
    notes = ["Written by hand from the runs: [notes.md](notes.md)."]
    sections = {
        "dbt's fixed cost: command line end to end (case b)": cli_table(main),
        "Write-audit-publish: audited against direct (case b)": audited(runs),
        "The interval's size: the model against the job": size_sweep(runs),
        "Scaling the table": scaling(runs),
        "On a cluster": on_cluster(runs),
        "On object storage": on_object_storage(runs),
        "Memory": memory(runs),
        "The warm path against a warm job (through the server)": warm_path(runs),
        "A table's age: one interval on day 30, 365 and 1,000": age(aged) if aged.exists() else [],
        "Analysis": notes if (out_dir / "notes.md").exists() else [],
    }
    for title, body in sections.items():
        if body:
            lines += [f"## {title}", "", *body, ""]
    text = "\n".join(lines)
    (out_dir / "results.md").write_text(text)
    return text
