// V4FPlanOps.td - ops that structure the plan rather than compute: run-time
// control flow (v4f.loop, v4f.select_branch) and dispatch regions. Included
// at the end of V4FOps.td (uses its op classes and constraints).
#ifndef V4F_PLAN_OPS_TD
#define V4F_PLAN_OPS_TD

//===----------------------------------------------------------------------===//
// Run-time control flow
//===----------------------------------------------------------------------===//

def V4F_LoopOp : V4F_Op<"loop", [RecursiveMemoryEffects]> {
  let summary = "an ONNX Loop whose trip count is known only at run time";
  let description = [{
    Runs `body` `trip_count` times (a one-element int64 tensor, clamped
    below at 0). The body's block arguments are the iteration number (a
    scalar int64 tensor) and the loop-carried values, starting from `inits`;
    `v4f.loop_yield` gives the next carried values, then one value per scan
    output. Results: the final carried values (the inits when the loop does
    not run), then each scan output stacked along a new axis 0 (of length
    trip_count). With `body_condition`, the body yields a one-element
    condition first: the loop ends after an iteration whose condition is 0
    (scan outputs then have as many slices as iterations ran). Carried
    values keep their type across iterations; a yielded
    value may be less static (a dynamic dim) and must then match at run
    time. `max_iterations` bounds the trip count: the plan checks it at run
    time and sizes the scan outputs for it when the count is computed by a
    kernel. With `unbounded` (an ONNX Loop without a trip count: a while
    loop), `trip_count` is `max_iterations + 1` and only the body's
    condition ends the loop: still running after `max_iterations`
    iterations is a run-time error naming the loop, never a silent stop.
    The CPU backend runs the body as a loop in the plan.

    ```mlir
    %y, %ys = v4f.loop %n carried(%y0) {max_iterations = 4096 : i64}
        : (tensor<i64>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
    ^bb0(%i: tensor<i64>, %y: tensor<2xf32>):
      %next = v4f.add %y, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      v4f.loop_yield %next, %y : tensor<2xf32>, tensor<2xf32>
    }
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$trip_count, Variadic<V4F_AnyTensor>:$inits, I64Attr:$max_iterations,
                   DefaultValuedAttr<BoolAttr, "false">:$body_condition,
                   DefaultValuedAttr<BoolAttr, "false">:$unbounded);
  let results = (outs Variadic<V4F_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $trip_count (`carried` `(` $inits^ `)`)? attr-dict `:` functional-type(operands, results) $body
  }];
  let hasVerifier = 1;
}

def V4F_LoopYieldOp : V4F_Op<"loop_yield", [Pure, Terminator, HasParent<"LoopOp">]> {
  let summary = "the next carried values and the scan values of one v4f.loop iteration";
  let arguments = (ins Variadic<V4F_AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def V4F_SelectBranchOp : V4F_Op<"select_branch", [Pure]> {
  let summary = "the output of an ONNX If whose condition is known only at run time";
  let description = [{
    `then_value` when the one-element `cond` is non-zero, else `else_value`.
    Unlike an elementwise select, the two values may have different shapes
    (same rank and element type); a dim is static in the result only where
    both agree. Codegen runs only the taken branch: every dispatch whose
    results are needed only through one side of a `select_branch` is guarded
    by the condition in the plan, and the result's dims are the taken
    branch's dims (its buffer is sized for the larger of the two).

    `then_error` / `else_error` mark a side that cannot run: the importer
    specializes the consumers of an If whose branches differ in rank into
    each branch, and a copy that cannot be compiled (or gives an output of a
    rank other than the model declares) becomes such a side. Its operand is a
    placeholder of the result's type (the other side's value); the plan
    refuses the run with the message when the condition selects it.

    ```mlir
    %y = v4f.select_branch %c, %a, %b : (tensor<1xi1>, tensor<1x8x8x8xf32>, tensor<1x4x4x4xf32>) -> tensor<1x?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$cond, AnyRankedTensor:$then_value, AnyRankedTensor:$else_value,
                       OptionalAttr<StrAttr>:$then_error, OptionalAttr<StrAttr>:$else_error);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$cond `,` $then_value `,` $else_value attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Dispatch regions
//===----------------------------------------------------------------------===//

def V4F_DispatchOp : V4F_Op<"dispatch", [
    SingleBlockImplicitTerminator<"DispatchReturnOp">, RecursiveMemoryEffects]> {
  let summary = "a unit of work that becomes one or more kernels of one executable";
  let description = [{
    Formed by `v4f-form-dispatch-regions`: the body holds a root op (conv,
    matmul, a reduction, an elementwise op ...) together with the ops fused
    into it, and `v4f.dispatch_return` yields the values used outside. The
    region is not isolated: it reads values defined above (tensors and
    constants), so fusion decisions are plain IR moves. Codegen lowers each
    region to kernels of the target chosen for it; values that do not leave
    the region never get a buffer of their own once the region is fused into
    one kernel.

    ```mlir
    %y = v4f.dispatch -> tensor<1x64x56x56xf32> {
      %c = v4f.conv %x, %w bias(%b) {...} : (...) -> tensor<1x64x56x56xf32>
      v4f.dispatch_return %c : tensor<1x64x56x56xf32>
    }
    ```
  }];
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` type($results)^)? attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ops of the region, terminator excluded.
    auto getBodyOps() { return getBody().front().without_terminator(); }
    /// The op the region was formed around (its first op with a kernel).
    ::mlir::Operation *getRoot();
  }];
}

def V4F_DispatchReturnOp : V4F_Op<"dispatch_return", [Pure, Terminator,
    HasParent<"DispatchOp">]> {
  let summary = "values a v4f.dispatch region yields";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // V4F_PLAN_OPS_TD
