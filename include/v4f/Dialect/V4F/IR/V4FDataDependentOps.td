// V4FDataDependentOps.td - ops whose result shape depends on input values.
// Included at the end of V4FOps.td (uses its constraints). Their dynamic
// result dims are counts known only once the op has run.
#ifndef V4F_DATA_DEPENDENT_OPS_TD
#define V4F_DATA_DEPENDENT_OPS_TD

def V4F_NonZeroOp : V4F_Op<"nonzero", [Pure]> {
  let summary = "coordinates of the non-zero elements, [rank, count] (ONNX NonZero)";
  let description = [{
    Row-major order of the elements. The count depends on the data: the plan
    sizes the result for its bound (every element non-zero) and later
    dispatches see the actual count (shape-program DataValue).

    ```mlir
    %i = v4f.nonzero %x : (tensor<2x3xf32>) -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input);
  let results = (outs 2DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_UniqueOp : V4F_Op<"unique", [Pure]> {
  let summary = "ONNX Unique: the distinct elements (or slices along axis), with indices and counts";
  let description = [{
    Without `axis` the input is flattened and `y` is 1-D; with `axis`, `y`
    holds the distinct slices along `axis` (compared element by element,
    lexicographically, in row-major order). `sorted` orders `y` ascending,
    otherwise by first occurrence. `indices` is the first occurrence of each
    distinct value, `inverse_indices` maps each input element (or slice) to
    its position in `y`, `counts` counts the occurrences. The number of
    distinct values depends on the data: the plan sizes `y`, `indices` and
    `counts` for its bound (all distinct; shape-program DataValue). NaNs
    compare equal to each other and larger than every number.

    ```mlir
    %y, %i, %inv, %n = v4f.unique %x {sorted = true}
        : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins V4F_AnyTensor:$input, OptionalAttr<I64Attr>:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs V4F_AnyTensor:$y, 1DTensorOf<[I64]>:$indices, 1DTensorOf<[I64]>:$inverse_indices,
                      1DTensorOf<[I64]>:$counts);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def V4F_NonMaxSuppressionOp : V4F_Op<"non_max_suppression", [Pure]> {
  let summary = "ONNX NonMaxSuppression: selected [batch, class, box] triples";
  let description = [{
    `boxes` is [B, N, 4], `scores` [B, C, N]. Per batch and class, boxes are
    visited by descending score (lower box index first among equal scores)
    and kept unless their IoU with an already kept box of that class exceeds
    `iou_threshold`, until `max_output_boxes_per_class` are kept. With a
    `score_threshold` only boxes scoring strictly above it are candidates.
    The thresholds are one-element tensors read at run time. Corners are
    [y1, x1, y2, x2] (any diagonal), or [x_center, y_center, width, height]
    with `center_point_box`. The row count depends on the data: the plan
    sizes the result for its bound (shape-program DataValue).

    ```mlir
    %s = v4f.non_max_suppression %boxes, %scores, %max, %iou, %score
        : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$boxes, RankedTensorOf<[F32]>:$scores,
                   RankedTensorOf<[I64]>:$max_output_boxes_per_class, RankedTensorOf<[F32]>:$iou_threshold,
                   Optional<RankedTensorOf<[F32]>>:$score_threshold,
                   DefaultValuedAttr<BoolAttr, "false">:$center_point_box);
  let results = (outs 2DTensorOf<[I64]>:$selected_indices);
  let assemblyFormat = [{
    $boxes `,` $scores `,` $max_output_boxes_per_class `,` $iou_threshold (`,` $score_threshold^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // V4F_DATA_DEPENDENT_OPS_TD
