// The layout attributes on .mlir input (docs/partitioner.md): a well-formed
// layout, placement and schedule print, parse and print again to the same
// text; each malformed or inconsistent one is refused by its verifier with
// one error at its location, and frenzy-opt writes nothing.
// RUN: frenzy-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// The well-formed module (the first split) printed, parsed, printed again.
// RUN: frenzy-opt %s -split-input-file -verify-diagnostics | sed '/^\/\/ -----/,$d' > %t.once.mlir
// RUN: frenzy-opt %t.once.mlir > %t.twice.mlir
// RUN: cmp %t.once.mlir %t.twice.mlir

// Nothing is written on error: -o's file is not created. A word that is not
// an action is a syntax error: the parser's message comes first (ODS's
// struct parsers add a "failed to parse" line per nesting level after it).
// RUN: rm -f %t.bad.mlir
// RUN: not frenzy-opt %s -split-input-file -o %t.bad.mlir 2> %t.err
// RUN: not test -e %t.bad.mlir
// RUN: printf '%%s\n' 'module attributes {frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 1, stages = [[F0 X0]]>]>} {}' > %t.word.mlir
// RUN: not frenzy-opt %t.word.mlir -o %t.word.out 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: not test -e %t.word.out
// WORD: word.mlir:1:{{[0-9]+}}: error: schedule: 'X0' is not F<k> or B<k> (micro-batch k's forward or backward)

// Two pipelines of different depth (the mesh is their bounding grid), one
// TP-2 stage, an idle device; every optional field given at least once.
// Doubles print so they read back bit-exactly (0.1 as 1.000000e-01; 1e-7
// as its shortest exact form).
// CHECK-LABEL: module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 2, pp = 2, tp = 2>, cluster = "c.yaml", description = "layout 1x2,1@3/2@1", global_batch = 8, micro_batch = 2, seq = 64, recompute = "full", full_recompute = 1, fixed_shares = true, gpipe = true, sequence_parallel = true, schedule_note = "a \22note\22", pipeline_seconds = 1.000000e-01, all_reduce_seconds = 0.33333333333333331, optimizer_seconds = 2.000000e-05,
// CHECK-SAME: pipelines = [<micro_batches = 3, sequences = 6, stage_seconds = 1.250000e-02, stages = [<node = 0, devices = [0, 1], layers = [0, 0], embed = true, gpu = "cpu", seconds = 1.000000e-02, forward_seconds = 0.0033333333333333335, transfer_seconds = 9.9999999999999995E-8, peak_bytes = 1048576, activation_bytes = 4096, full_recompute = true>, <node = 0, devices = [2], layers = [1, 1], head = true, seconds = 1.250000e-02, peak_bytes = 1048576>]>,
// CHECK-SAME: <micro_batches = 1, sequences = 2, stage_seconds = 2.000000e-02, stages = [<node = 1, devices = [0], layers = [0, 1], embed = true, head = true, seconds = 2.000000e-02, peak_bytes = 2097152>]>], idle = [<node = 1, devices = [1], why = "slower than it saves">]>,
// CHECK-SAME: frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 3, stages = {{\[}}[F0 F1 B0 F2 B1 B2], [F0 B0 F1 B1 F2 B2]]>, <micro_batches = 1, stages = {{\[}}[F0 B0]]>]>}
// CHECK: frenzy.placement = #frenzy.placement<pp = [1, 0], tp = [1, 1]>
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 2, pp = 2, tp = 2>, cluster = "c.yaml", description = "layout 1x2,1@3/2@1", global_batch = 8, micro_batch = 2, seq = 64, recompute = "full", full_recompute = 1, fixed_shares = true, gpipe = true, sequence_parallel = true, schedule_note = "a \"note\"", pipeline_seconds = 0.1, all_reduce_seconds = 0.33333333333333331, optimizer_seconds = 2.0e-5, pipelines = [<micro_batches = 3, sequences = 6, stage_seconds = 0.0125, stages = [<node = 0, devices = [0, 1], layers = [0, 0], embed = true, gpu = "cpu", seconds = 0.01, forward_seconds = 0.0033333333333333335, transfer_seconds = 1.0e-7, peak_bytes = 1048576, activation_bytes = 4096, full_recompute = true>, <node = 0, devices = [2], layers = [1, 1], head = true, seconds = 0.0125, peak_bytes = 1048576>]>, <micro_batches = 1, sequences = 2, stage_seconds = 0.02, stages = [<node = 1, devices = [0], layers = [0, 1], embed = true, head = true, seconds = 0.02, peak_bytes = 2097152>]>], idle = [<node = 1, devices = [1], why = "slower than it saves">]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 3, stages = [[F0 F1 B0 F2 B1 B2], [F0 B0 F1 B1 F2 B2]]>, <micro_batches = 1, stages = [[F0 B0]]>]>} {
  func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "frenzy.add"(%a, %a) {frenzy.block = #frenzy.block<1>, frenzy.placement = #frenzy.placement<pp = [1, 0], tp = [1, 1]>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----
// An axis used twice.
// expected-error @+1 {{layout: mesh: axis 'pp' used twice; name each axis once}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, pp = 2>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// An axis Frenzy does not know.
// expected-error @+1 {{layout: mesh: unknown axis 'xp'; valid axes: pp, dp, tp, sp, cp, ep}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, xp = 1>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// Stages placed on an axis the mesh lacks: a TP-2 stage, no tp axis.
// expected-error @+1 {{layout: the stages are placed on axis 'tp', which the mesh does not have; add tp = 2 to the mesh}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0, 1], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// Mesh sizes that do not match the layout's grid (4 slots for 2 devices).
// expected-error @+1 {{layout: mesh axis pp = 2 but the layout has 1 stages in the deepest pipeline}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 2, pp = 2, tp = 1>, cluster = "c.yaml", global_batch = 2, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>, <micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [1], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// A device placed twice.
// expected-error @+1 {{layout: node 0 device 0 is placed twice (pipelines[0].stages[0] and pipelines[1].stages[0])}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 2, pp = 1, tp = 1>, cluster = "c.yaml", global_batch = 2, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>, <micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// A batch share that is not micro_batches x micro_batch.
// expected-error @+1 {{layout: pipelines[0] has sequences = 3, not micro_batches x micro_batch = 4}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, tp = 1>, cluster = "c.yaml", global_batch = 4, micro_batch = 2, seq = 8, recompute = "none", pipelines = [<micro_batches = 2, sequences = 3, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// A stage with no devices: named by its place in the layout.
// expected-error @+1 {{layout: pipelines[0].stages[0]: devices is empty; a stage runs on at least one device}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, tp = 1>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// An unknown recompute mode.
// expected-error @+1 {{layout: recompute "some" must be none, selective or full}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, tp = 1>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "some", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
}

// -----
// A schedule naming a micro-batch that does not exist (F2 of 2).
// expected-error @+1 {{schedule: pipelines[0]: stage 0 runs F2, but the pipeline has 2 micro-batches (0..1)}}
module attributes {frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 2, stages = [[F0 F2 B0 B2]]>]>} {
}

// -----
// A backward before its forward.
// expected-error @+1 {{schedule: pipelines[0]: stage 1: B0 repeats, or is a backward before its forward}}
module attributes {frenzy.schedule = #frenzy.schedule<kind = "gpipe", pipelines = [<micro_batches = 1, stages = [[F0 B0], [B0 F0]]>]>} {
}

// -----
// An unknown kind.
// expected-error @+1 {{schedule: kind "zigzag" must be "1f1b" or "gpipe"}}
module attributes {frenzy.schedule = #frenzy.schedule<kind = "zigzag", pipelines = [<micro_batches = 1, stages = [[F0 B0]]>]>} {
}

// -----
// A sound schedule that does not match the layout (2 micro-batches, not 1).
// expected-error @+1 {{frenzy.schedule: pipeline 0 schedules 2 micro-batches; the layout's runs 1}}
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, tp = 1>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 2, stages = [[F0 F1 B0 B1]]>]>} {
}

// -----
// A placement on an axis the layout's mesh does not have: the op's location.
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, tp = 1>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
  func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error @+1 {{frenzy.placement: axis 'sp' is not an axis of the layout's mesh}}
    %0 = "frenzy.add"(%a, %a) {frenzy.placement = #frenzy.placement<pp = [0], sp = [1]>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----
// A placement on a stage that does not exist.
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 1, tp = 1>, cluster = "c.yaml", global_batch = 1, micro_batch = 1, seq = 8, recompute = "none", pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 1.0, stages = [<node = 0, devices = [0], layers = [0, 0], seconds = 1.0, peak_bytes = 1>]>]>} {
  func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error @+1 {{frenzy.placement: stage 3 of pipeline 0 does not exist (it has 1)}}
    %0 = "frenzy.add"(%a, %a) {frenzy.placement = #frenzy.placement<pp = [3], tp = [1]>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----
// A placement's axis named twice.
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{placement: axis 'pp' used twice}}
  %0 = "frenzy.add"(%a, %a) {frenzy.placement = #frenzy.placement<pp = [0], pp = [1]>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
