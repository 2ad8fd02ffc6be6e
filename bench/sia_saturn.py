#!/usr/bin/env python3
"""Translates Sia's saturn workload-1 into frenzy-sched inputs: a cluster
file, a 160-job queue and one option table per application, written to
OUT_DIR. Used by bench/sia_check.sh; reads local files only.
Usage: sia_saturn.py SIA_DATA_DIR OUT_DIR

Source data (not in this repository: the artifact carries no licence file,
so only this translator is committed): Sia's SOSP'23 artifact, folder
sia-simulator/, files workloads/saturn/workload-1.csv and, for bert, cifar10,
deepspeech2, imagenet and yolov3, traces/<app>/placements-<c>.csv,
scalability-<c>.csv (c = aws, dgx-ext, rtx) and validation-<batch>.csv;
SIA_DATA_DIR holds them with that layout. docs/scheduler.md ("Checking the baselines") says
what is kept and what is simplified. Model, for each application, GPU type
and Sia configuration (n GPUs: 1, 2, 4, a whole node, then whole nodes):
  seconds to finish in isolation = min over the profiled batch sizes B of
    iterations(B) x step_time(n, ceil(B / n)) x slowdown(app)
  iterations(B): the validation curve's iteration count at the completion
    epoch (max_epochs - 1; these curves count iterations to the same
    statistical progress, so a large batch needs more samples);
  step_time: the profiled step time of that placement, linear in the local
    batch between profiled points (no extrapolation), with gradient
    accumulation above the largest profiled local batch;
  slowdown: the artifact's calibration (cifar10 1.8, the rest 1.2).
Each job is 10,000 steps; an option's step_s is that time / 10,000, so a
job's options are its per-configuration speeds (goodput with the batch size
tuned per configuration, as Sia runs it).
"""
import csv, math, os, sys

APPS = {"bert": 2, "cifar10": 100, "imagenet": 90, "deepspeech2": 80,
        "yolov3": 50}
SLOWDOWN = {"cifar10": 1.8}
# Sia's default simulated cluster: cluster -> (frenzy type, GPUs/node, nodes)
CLUSTERS = {"aws": ("T4", 4, 6), "dgx-ext": ("A100-40G", 8, 2),
            "rtx": ("RTX-2080Ti", 8, 3)}
STEPS = 10000


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def interp(points, x):
    """Linear interpolation of (x, (y1, y2)) points; None outside."""
    points = sorted(points)
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= x <= x1:
            t = 0 if x1 == x0 else (x - x0) / (x1 - x0)
            return tuple(a + t * (b - a) for a, b in zip(y0, y1))
    if points and points[0][0] == x:
        return points[0][1]
    return None


def app_model(sia, app, cluster):
    d = os.path.join(sia, "traces", app)
    val = {}
    for name in os.listdir(d):
        if name.startswith("validation-"):
            b = int(name[len("validation-"):-len(".csv")])
            val[b] = [float(r["iteration"]) for r in rows(os.path.join(d, name))]
    place = rows(os.path.join(d, f"placements-{cluster}.csv"))
    scal = rows(os.path.join(d, f"scalability-{cluster}.csv"))
    min_local = min(int(float(r["local_bsz"])) for r in place)
    max_local = max(int(float(r["local_bsz"])) for r in place)
    if app == "deepspeech2" and cluster == "rtx":
        max_local = 57  # the artifact's memory limit there
    epoch = APPS[app] - 1
    return val, place, scal, min_local, max_local, epoch


def step_time(model, nodes, per_node, local):
    val, place, scal, _, _, _ = model
    pid = str(per_node) * nodes
    pts = [(float(r["local_bsz"]), (float(r["step_time"]), float(r["sync_time"])))
           for r in place if r["placement"] == pid]
    if not pts:
        pts = [(float(r["local_bsz"]), (float(r["step_time"]), float(r["sync_time"])))
               for r in scal if int(r["num_nodes"]) == nodes and
               int(r["num_replicas"]) == nodes * per_node]
    return interp(pts, local)


def best_seconds(model, app, nodes, per_node):
    val, _, _, min_local, max_local, epoch = model
    n = nodes * per_node
    best = None
    for b in sorted(val):
        local = math.ceil(b / n - 1e-8)
        if local < min_local or epoch >= len(val[b]):
            continue
        accum = math.ceil(local / max_local - 1e-8) - 1
        atomic = math.ceil(local / (accum + 1) - 1e-8)
        st = step_time(model, nodes, per_node, atomic)
        if st is None:
            continue
        step, sync = st
        step += accum * (step - sync)
        t = val[b][epoch] * step * SLOWDOWN.get(app, 1.2)
        best = t if best is None or t < best else best
    return best


def configs(per_node, nodes):
    out = [(1, c) for c in (1, 2, 4, 8) if c <= per_node]
    out += [(k, per_node) for k in range(2, nodes + 1)]
    return out


def main():
    sia, out = sys.argv[1], sys.argv[2]
    header = ("# Translated from Sia's SOSP'23 artifact (sia-simulator traces) by\n"
              "# bench/sia_saturn.py; see docs/scheduler.md.\n")
    with open(os.path.join(out, "cluster.yaml"), "w") as f:
        f.write(header + "# Sia's default simulated cluster: 6 AWS g4dn nodes (4 T4),\n"
                "# 2 DGX-A100 (8 A100-40G), 3 nodes of 8 RTX 2080Ti: 64 GPUs.\n")
        f.write("name: sia-saturn-64\ngpu_types:\n"
                "  - {name: RTX-2080Ti, memory_gib: 11, tflops: 54, "
                "bandwidth_gbs: 616, bf16: false}\nnodes:\n")
        for cl, (t, per, nodes) in CLUSTERS.items():
            for i in range(nodes):
                link = "nvlink" if t == "A100-40G" else "pcie"
                f.write(f"  - {{name: {cl}-{i}, gpu: {t}, count: {per}, link: {link}}}\n")
        f.write("network: {bandwidth_gbps: 25}\n")
    for app in APPS:
        lines = []
        for cl, (t, per, nodes) in CLUSTERS.items():
            model = app_model(sia, app, cl)
            for k, c in configs(per, nodes):
                s = best_seconds(model, app, k, c)
                if s is None:
                    continue
                n = k * c
                lines.append(f"option gpus={t}:{n}/1 tp=1 pp=1 dp={n} "
                             f"step_s={s / STEPS:.6g} peak_bytes=1073741824 "
                             f"layout={app} {t}x{n} ({k} node{'s' if k > 1 else ''})\n")
        with open(os.path.join(out, f"{app}.options"), "w") as f:
            f.write(header + f"# {app}: seconds to target / {STEPS} per option\n")
            f.writelines(lines)
    with open(os.path.join(out, "queue.yaml"), "w") as f:
        f.write(header + "# saturn workload-1: 160 jobs; user_gpus is the workload's\n"
                "# num_replicas (Gavel's fixed request).\njobs:\n")
        for r in rows(os.path.join(sia, "workloads", "saturn", "workload-1.csv")):
            app = r["application"]
            f.write(f"  - {{name: {r['name']}, onnx: {app}.onnx, options: {app}.options, "
                    f"global_batch: {r['batch_size']}, seq: 1, steps: {STEPS}, "
                    f"arrival: {float(r['time']):.0f}, user_gpus: {r['num_replicas']}}}\n")


if __name__ == "__main__":
    main()
