// The plan translation on .mlir input (lib/Target/Plan, docs/plan.md): a
// module carrying the typed layout and schedule becomes plan.bin, whose
// stages, transfers and streams follow from the ops' blocks and the
// layout's stage placements. Two stages of one pipeline on two CPU
// ranks, two micro-batches, 1F1B: stage 0 (block 0) sends %h forward,
// stage 1 (block 1) sends the gradient %g back.
// RUN: rm -f %t.plan
// RUN: frenzy-translate --mlir-to-frenzy-plan %s --plan-model=%s --plan-cluster=%src/examples/cpu-4.yaml -o %t.plan
// RUN: tail -c +33 %t.plan | protoc --decode=frenzy.plan.Plan -I %src/proto %src/proto/plan.proto | FileCheck %s
// The same bytes every run (map fields serialise deterministically).
// RUN: frenzy-translate --mlir-to-frenzy-plan %s --plan-model=%s --plan-cluster=%src/examples/cpu-4.yaml -o %t.again
// RUN: cmp %t.plan %t.again

// Without a cluster (the layout's "c.yaml" does not exist): one line, no file.
// RUN: rm -f %t.none
// RUN: not frenzy-translate --mlir-to-frenzy-plan %s --plan-model=%s -o %t.none 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// RUN: not test -e %t.none
// NOCLUSTER: translate.mlir:{{[0-9]+}}:1: error: c.yaml: {{.*}}

// One device per rank; rank 0 (stage 0) sends %h (tensor 1) after each
// forward and receives %g (tensor 3) before each backward; every action has
// its start and its seconds from the timeline simulation.
// CHECK: devices {
// CHECK-NEXT: node: "localhost"
// CHECK-NEXT: gpu_type: "cpu"
// CHECK-NEXT: }
// CHECK-NEXT: devices {
// CHECK-NEXT: node: "localhost"
// CHECK-NEXT: gpu_type: "cpu"
// CHECK-NEXT: index: 1
// CHECK: ranks {
// CHECK-NEXT: node: "localhost"
// CHECK-NEXT: gpu_type: "cpu"
// CHECK-NEXT: predicted_peak_bytes: 1024
// CHECK-NEXT: stream {
// CHECK-NEXT: predicted_seconds: {{[0-9.e+-]+}}
// CHECK-NEXT: }
// CHECK-NEXT: stream {
// CHECK-NEXT: kind: SEND
// CHECK-NEXT: tensor: 1
// CHECK-NEXT: peer: 1
// CHECK-NEXT: predicted_start: {{[0-9.e+-]+}}
// CHECK-NEXT: predicted_seconds: {{[0-9.e+-]+}}
// CHECK: kind: SEND
// CHECK-NEXT: micro_batch: 1
// CHECK-NEXT: tensor: 1
// CHECK: kind: RECV
// CHECK-NEXT: tensor: 3
// CHECK-NEXT: peer: 1
// CHECK: kind: BACKWARD
// CHECK: kind: RECV
// CHECK-NEXT: micro_batch: 1
// CHECK-NEXT: tensor: 3
// CHECK: kind: BACKWARD
// CHECK-NEXT: micro_batch: 1
// CHECK: kind: REDUCE_GRADS
// CHECK: kind: UPDATE
// CHECK: schedule: "1f1b"
// Rank 1 (stage 1), 1F1B: receive, forward, backward, send, per micro-batch.
// CHECK: ranks {
// CHECK-NEXT: id: 1
// CHECK: device: 1
// CHECK-NEXT: stage: 1
// CHECK: kind: RECV
// CHECK-NEXT: tensor: 1
// CHECK-NOT: peer
// CHECK: kind: BACKWARD
// CHECK: kind: SEND
// CHECK-NEXT: tensor: 3
// CHECK: kind: RECV
// CHECK-NEXT: micro_batch: 1
// CHECK-NEXT: tensor: 1
// CHECK: schedule: "1f1b"
// The stages: instructions by phase and the tensors crossing them.
// CHECK: stages {
// CHECK-NEXT: embed: true
// CHECK-NEXT: instrs: 0
// CHECK-NEXT: instrs: 3
// CHECK-NEXT: recv_tensors: 3
// CHECK-NEXT: send_tensors: 1
// CHECK-NEXT: ranks: 0
// CHECK-NEXT: micro_batches: 2
// CHECK-NEXT: predicted_seconds: 0.01
// CHECK-NEXT: forward_instrs: 0
// CHECK-NEXT: backward_instrs: 3
// CHECK-NEXT: }
// CHECK-NEXT: stages {
// CHECK-NEXT: stage: 1
// CHECK-NEXT: first_layer: 1
// CHECK-NEXT: last_layer: 1
// CHECK-NEXT: head: true
// CHECK-NEXT: instrs: 1
// CHECK-NEXT: instrs: 2
// CHECK-NEXT: recv_tensors: 1
// CHECK-NEXT: send_tensors: 3
// CHECK-NEXT: ranks: 1
// CHECK-NEXT: micro_batches: 2
// CHECK-NEXT: predicted_seconds: 0.01
// CHECK-NEXT: forward_instrs: 1
// CHECK-NEXT: backward_instrs: 2
// CHECK-NEXT: }
// CHECK: micro_batch: 1
// CHECK-NEXT: global_batch: 2
// CHECK-NEXT: predicted_step_seconds: 0.03
// CHECK-NEXT: total_micro_batches: 2

module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 2, tp = 1>, cluster = "c.yaml", global_batch = 2, micro_batch = 1, seq = 4, recompute = "none", pipeline_seconds = 0.03, pipelines = [<micro_batches = 2, sequences = 2, stage_seconds = 0.01, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 0.01, peak_bytes = 1024>, <node = 0, devices = [1], layers = [1, 1], head = true, seconds = 0.01, peak_bytes = 1024>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 2, stages = [[F0 F1 B0 B1], [F0 B0 F1 B1]]>]>} {
  func.func @train_step(%x: tensor<2x4xf32> {frenzy.name = "x"}) -> (tensor<2x4xf32> {frenzy.name = "loss"}) {
    %h = "frenzy.add"(%x, %x) {frenzy.block = #frenzy.block<0>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %y = "frenzy.add"(%h, %h) {frenzy.block = #frenzy.block<1>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %g = "frenzy.add"(%y, %y) {frenzy.block = #frenzy.block<1>, frenzy.backward} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %g0 = "frenzy.add"(%g, %h) {frenzy.block = #frenzy.block<0>, frenzy.backward} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}
