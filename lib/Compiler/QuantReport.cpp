//===- QuantReport.cpp - quantization candidates and --quant-report -------===//
//
// Which layers --accuracy-budget may keep in float32 (ranked by how much
// quantization costs them), and the JSON report of what v4f-quantize did
// to every matmul and conv (llvm::json).
//
//===----------------------------------------------------------------------===//
#include "QuantReport.h"

#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"
#include "v4f/Transforms/QuantizationMath.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace v4f {

namespace {

/// Numbers as the report has always written them: 6 significant digits,
/// null when not finite (JSON has no inf or NaN).
void number(llvm::json::OStream &j, double v) {
  if (!std::isfinite(v)) return j.value(nullptr);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  j.rawValue([&](llvm::raw_ostream &os) { os << buf; });
}

/// A float32 that reads back to the same float (9 significant digits).
void float32(llvm::json::OStream &j, float v) {
  if (!std::isfinite(v)) return j.value(nullptr);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  j.rawValue([&](llvm::raw_ostream &os) { os << buf; });
}

void range(llvm::json::OStream &j, llvm::StringRef key, double lo, double hi) {
  j.attributeArray(key, [&] {
    number(j, lo);
    number(j, hi);
  });
}

} // namespace

std::vector<QuantCandidate> rankQuantCandidates(mlir::ModuleOp module, const std::string &mode,
                                                const CompilerOptions &options, int64_t groupSize,
                                                const std::vector<CalibratedLayer> &layers) {
  std::map<const void *, double> measured;
  for (const CalibratedLayer &l : layers)
    if (std::isfinite(l.sqnrDb) || std::isinf(l.sqnrDb)) measured[l.loc.getAsOpaquePointer()] = l.sqnrDb;
  std::vector<QuantCandidate> out;
  module.walk([&](mlir::Operation *op) {
    auto mm = llvm::dyn_cast<MatMulOp>(op);
    auto conv = llvm::dyn_cast<ConvOp>(op);
    if (!mm && !conv) return;
    std::string node = firstNodeName(op->getLoc());
    if (node.empty()) return;
    bool excluded = false;
    op->getLoc()->walk([&](mlir::Location l) {
      if (auto named = llvm::dyn_cast<mlir::NameLoc>(l))
        excluded |= llvm::is_contained(options.quantizeExclude, named.getName().str());
      return mlir::WalkResult::advance();
    });
    mlir::DenseElementsAttr weight;
    mlir::Value w = mm ? mm.getRhs() : conv.getWeight();
    mlir::Value a = mm ? mm.getLhs() : conv.getInput();
    auto wType = llvm::dyn_cast<mlir::RankedTensorType>(w.getType());
    if (excluded || !mlir::matchPattern(w, mlir::m_Constant(&weight)) || !wType || !wType.hasStaticShape() ||
        !wType.getElementType().isF32() || !llvm::cast<mlir::RankedTensorType>(a.getType()).getElementType().isF32())
      return;
    if (mm && wType.getRank() != 2) return;
    // Convs: what v4f-quantize takes (static int8, groups 1).
    if (conv && (mode != "int8" || conv.getGroups() != 1)) return;
    if (mode == "int8" && !op->hasAttr("v4f.calibration")) return;
    QuantCandidate c{node};
    if (auto it = measured.find(op->getLoc().getAsOpaquePointer()); it != measured.end()) {
      c.sqnrDb = it->second;
    } else {
      std::vector<float> values = floatValues(weight);
      int64_t K = mm ? wType.getDimSize(0) : wType.getNumElements() / wType.getDimSize(0);
      int64_t N = mm ? wType.getDimSize(1) : wType.getDimSize(0);
      if (conv) { // OIHW = [N, K]: the [K, N] matrix is its transpose
        std::vector<float> t(values.size());
        for (int64_t n = 0; n < N; ++n)
          for (int64_t k = 0; k < K; ++k) t[k * N + n] = values[n * K + k];
        values.swap(t);
      }
      c.sqnrDb =
          weightQuantizationSqnrDb(values.data(), K, N, mode, options.perChannel, groupSize, options.int4ZeroPoints);
    }
    out.push_back(c);
  });
  // Most sensitive first; graph order among equals.
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return out[a].sqnrDb != out[b].sqnrDb ? out[a].sqnrDb < out[b].sqnrDb : a < b; });
  std::vector<QuantCandidate> ranked;
  for (size_t i : order) ranked.push_back(out[i]);
  return ranked;
}

std::string quantReport(mlir::ModuleOp module, const CompilerOptions &options, const SampleSet *calibration,
                        const std::vector<CalibratedLayer> &layers, const MixedPrecisionResult *mixed) {
  std::map<std::string, double> budgetKept;
  if (mixed)
    for (const QuantCandidate &c : mixed->keptFloat) budgetKept[c.node] = c.sqnrDb;
  std::map<const void *, std::vector<const CalibratedLayer *>> byLoc;
  for (const CalibratedLayer &l : layers) byLoc[l.loc.getAsOpaquePointer()].push_back(&l);
  auto takeLayer = [&](mlir::Location loc) -> const CalibratedLayer * {
    auto it = byLoc.find(loc.getAsOpaquePointer());
    if (it == byLoc.end() || it->second.empty()) return nullptr;
    const CalibratedLayer *l = it->second.front();
    it->second.erase(it->second.begin());
    return l;
  };
  bool int4 = options.quantize.rfind("int4-weight", 0) == 0 || options.quantize.rfind("w4a8", 0) == 0;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, /*IndentSize=*/2);
  int quantized = 0, kept = 0;
  j.object([&] {
    j.attribute("mode", options.quantize);
    j.attribute("weights", int4 ? "per-group" : options.perChannel ? "per-channel" : "per-tensor");
    if (calibration)
      j.attributeObject("calibration", [&] {
        j.attribute("data", calibration->path);
        j.attribute("method", options.calibrationMethod);
        j.attribute("samples", int64_t(calibration->samples));
      });
    if (mixed)
      j.attributeObject("accuracy_budget", [&] {
        j.attributeBegin("budget_points");
        number(j, mixed->budget);
        j.attributeEnd();
        j.attribute("metric", mixed->metric);
        j.attribute("validation", options.validationData);
        j.attributeBegin("float32");
        number(j, mixed->floatMetric);
        j.attributeEnd();
        j.attributeBegin("quantized");
        number(j, mixed->chosen.metric);
        j.attributeEnd();
        j.attributeBegin("loss_points");
        number(j, mixed->chosen.loss);
        j.attributeEnd();
        j.attribute("float32_layers", int64_t(mixed->chosen.floatLayers));
        j.attributeArray("trials", [&] {
          for (const AccuracyTrial &t : mixed->trials)
            j.object([&] {
              j.attribute("float32_layers", int64_t(t.floatLayers));
              j.attributeBegin("metric");
              number(j, t.metric);
              j.attributeEnd();
              j.attributeBegin("loss_points");
              number(j, t.loss);
              j.attributeEnd();
            });
        });
      });
    j.attributeArray("layers", [&] {
      module.walk([&](mlir::Operation *op) {
        auto qmm = llvm::dyn_cast<QuantizedMatMulOp>(op);
        auto qconv = llvm::dyn_cast<QuantizedConvOp>(op);
        auto i4mm = llvm::dyn_cast<Int4MatMulOp>(op);
        if (!qmm && !qconv && !i4mm && !llvm::isa<MatMulOp, ConvOp>(op)) return;
        const CalibratedLayer *layer = takeLayer(op->getLoc());
        auto scaleRange = [&](mlir::Value v) {
          mlir::DenseElementsAttr scales;
          if (!mlir::matchPattern(v, mlir::m_Constant(&scales))) return;
          float lo = INFINITY, hi = 0;
          for (float s : scales.getValues<float>()) lo = std::min(lo, std::fabs(s)), hi = std::max(hi, std::fabs(s));
          range(j, "weight_scale", lo, hi);
        };
        auto observed = [&](bool withRange) {
          if (!layer) return;
          range(j, "observed", layer->min, layer->max);
          if (withRange) range(j, "range", layer->lo, layer->hi);
        };
        j.object([&] {
          j.attributeArray("nodes", [&] {
            op->getLoc()->walk([&](mlir::Location l) {
              if (auto named = llvm::dyn_cast<mlir::NameLoc>(l)) j.value(named.getName().str());
              return mlir::WalkResult::advance();
            });
          });
          if (i4mm) {
            ++quantized;
            j.attribute("precision", "int4");
            j.attributeObject("activation",
                              [&] { j.attribute("quantization", i4mm.getInt8Activations() ? "dynamic" : "none"); });
            j.attribute("group_size", int64_t(i4mm.getGroupSize()));
            j.attribute("zero_points", bool(i4mm.getRhsZeroPoint()));
            scaleRange(i4mm.getRhsScale());
          } else if (qmm) {
            ++quantized;
            j.attribute("precision", "int8");
            j.attributeObject("activation", [&] {
              j.attribute("quantization", qmm.getActQuant().str());
              if (qmm.getActQuant() == "static") {
                j.attributeBegin("scale");
                float32(j, qmm.getActScale().convertToFloat());
                j.attributeEnd();
                j.attribute("zero_point", int64_t(int32_t(qmm.getActZeroPoint())));
              }
              observed(/*withRange=*/true);
            });
            scaleRange(qmm.getRhsScale());
            if (layer) {
              j.attributeBegin("sqnr_db");
              number(j, layer->sqnrDb);
              j.attributeEnd();
              j.attributeBegin("max_abs_error");
              number(j, layer->maxAbsError);
              j.attributeEnd();
            }
          } else if (qconv) {
            ++quantized;
            j.attribute("op", "conv");
            j.attribute("precision", "int8");
            j.attributeObject("activation", [&] {
              j.attribute("quantization", "static");
              j.attributeBegin("scale");
              float32(j, qconv.getActScale().convertToFloat());
              j.attributeEnd();
              j.attribute("zero_point", int64_t(int32_t(qconv.getActZeroPoint())));
              j.attribute("input", qconv.getInput().getType().getElementType().isInteger(8) ? "int8" : "float32");
              observed(/*withRange=*/true);
            });
            scaleRange(qconv.getWeightScale());
            // int8 carried to the next layers (v4f-carry-int8).
            j.attributeObject("output", [&] {
              if (auto outScale = qconv.getOutScale()) {
                j.attribute("precision", "int8");
                j.attributeBegin("scale");
                float32(j, outScale->convertToFloat());
                j.attributeEnd();
                j.attribute("zero_point", int64_t(int32_t(qconv.getOutZeroPoint())));
              } else {
                j.attribute("precision", "float32");
              }
            });
            if (qconv.getResidual()) j.attribute("residual", qconv.getResidualScale() ? "int8" : "float32");
          } else {
            ++kept;
            auto note = op->getAttrOfType<mlir::StringAttr>("v4f.precision_note");
            std::string reason = note ? note.str() : "not a candidate of v4f-quantize";
            if (auto it = budgetKept.find(firstNodeName(op->getLoc())); it != budgetKept.end()) {
              char db[32];
              std::snprintf(db, sizeof db, "%.6g", it->second);
              reason = "kept float32 by --accuracy-budget (layer SQNR " + std::string(db) + " dB)";
            }
            j.attribute("precision", "float32");
            j.attribute("reason", reason);
            observed(/*withRange=*/false);
          }
        });
      });
    });
    j.attributeObject("summary", [&] {
      j.attribute(int4 ? "int4" : "int8", int64_t(quantized));
      j.attribute("float32", int64_t(kept));
    });
  });
  os << "\n";
  return text;
}

} // namespace v4f
