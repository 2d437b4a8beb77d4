//===- ApplyTuning.cpp - v4f-apply-tuning and the tuning database ----------===//
//
// The candidates `v4fc tune` measures for each float matmul and conv, the
// key its winners are stored under, the JSON database, and the pass that
// applies either one candidate to every op (tuning runs) or the database's
// winners (compile --tuning-db). The pass's contract is in Passes.td;
// docs/tuning.md describes the loop.
//
//===----------------------------------------------------------------------===//
#include "CPUKernelContext.h"
#include "v4f/Codegen/CPUCodegen.h"
#include "v4f/Codegen/Passes.h"
#include "v4f/Codegen/Tuning.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

namespace v4f {
#define GEN_PASS_DEF_APPLYTUNING
#include "v4f/Codegen/Passes.h.inc"
} // namespace v4f

using namespace mlir;

namespace v4f {

std::string TuningConfig::describe() const {
  std::string s = algorithm.empty() ? "" : algorithm + " ";
  return s + llvm::formatv("mr {0} nr {1} lanes {2} mb {3} nb {4} kc {5}", mr, nr, lanes, mb, nb, kc).str();
}

namespace {

bool isTunable(Operation *op) {
  if (!op->hasAttrOfType<GemmTilingAttr>(kTilingAttr)) return false;
  if (auto mm = llvm::dyn_cast<MatMulOp>(op)) return mm.getType().getElementType().isF32();
  if (auto conv = llvm::dyn_cast<ConvOp>(op)) {
    auto algorithm = conv->getAttrOfType<StringAttr>(kConvAlgorithmAttr);
    return conv.getType().getElementType().isF32() &&
           (!algorithm || algorithm.getValue() == "channel_lanes" || winogradTileOf(op));
  }
  return false;
}

TuningConfig currentConfig(Operation *op) {
  auto t = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
  TuningConfig c;
  if (auto algorithm = op->getAttrOfType<StringAttr>(kConvAlgorithmAttr)) c.algorithm = algorithm.getValue().str();
  c.mr = t.getMr();
  c.nr = t.getNr();
  c.lanes = t.getLanes();
  c.mb = t.getMb();
  c.nb = t.getNb();
  c.kc = t.getKc();
  return c;
}

void applyConfig(Operation *op, const TuningConfig &c) {
  MLIRContext *ctx = op->getContext();
  op->setAttr(kTilingAttr, GemmTilingAttr::get(ctx, c.mr, c.nr, c.lanes, c.mb, c.nb, c.kc));
  if (llvm::isa<ConvOp>(op)) {
    if (c.algorithm.empty())
      op->removeAttr(kConvAlgorithmAttr);
    else
      op->setAttr(kConvAlgorithmAttr, StringAttr::get(ctx, c.algorithm));
    recordRowTilesOuter(llvm::cast<ConvOp>(op));
  }
}

/// Candidate 0 is the cost model's choice; each other changes one thing.
std::vector<TuningConfig> candidates(Operation *op, CPUTargetAttr target) {
  TuningConfig base = currentConfig(op);
  std::vector<TuningConfig> out{base};
  auto add = [&](TuningConfig c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  bool winograd = false;
  if (auto conv = llvm::dyn_cast<ConvOp>(op)) {
    // The other algorithms the conv can take, with the same register tile.
    auto tiling = op->getAttrOfType<GemmTilingAttr>(kTilingAttr);
    // Each with the cost model's cache blocks for that algorithm at this
    // register tile (a 1x1 conv's GEMM takes pointwiseTiling's).
    auto withAlgorithm = [&](llvm::StringRef algorithm) {
      TuningConfig c = base;
      c.algorithm = algorithm;
      GemmTilingAttr blocks =
          GemmTilingAttr::get(op->getContext(), c.mr, c.nr, c.lanes, 8 * c.mr, chooseGemmTiling(target).getNb(), c.kc);
      if (c.algorithm.empty()) blocks = pointwiseTiling(conv, blocks, target.getL2CacheBytes());
      c.mb = blocks.getMb();
      c.nb = blocks.getNb();
      add(c);
    };
    withAlgorithm("");
    if (channelLanesEligible(conv, tiling)) withAlgorithm("channel_lanes");
    if (winogradEligible(conv, tiling)) {
      withAlgorithm(winogradAlgorithm(2, false));
      withAlgorithm(winogradAlgorithm(4, false));
      withAlgorithm(winogradAlgorithm(4, true));
    }
    winograd = winogradTileOf(op).has_value();
  }
  // A taller register tile where the accumulators, the B vectors and the
  // broadcast still fit the register file (AVX-512: 12 x 2 + 3 of 32), or a
  // shorter one.
  auto addRows = [&] {
    int64_t vecs = base.nr / std::max<int64_t>(base.lanes, 1);
    int64_t taller = base.mr * 3 / 2;
    TuningConfig rows = base;
    rows.mr = taller * vecs + vecs + 1 <= target.getVectorRegisters() ? taller : std::max<int64_t>(base.mr / 2, 1);
    rows.mb = 8 * rows.mr;
    add(rows);
  };
  // A Winograd conv has no K blocks and no column blocks: only its register
  // tile's rows vary.
  if (winograd) {
    addRows();
    return out;
  }
  // K blocks of half and twice the size (a multiple of 8, 32..1024).
  if (base.kc / 2 >= 32) {
    TuningConfig c = base;
    c.kc = base.kc / 2 / 8 * 8;
    add(c);
  }
  if (base.kc * 2 <= 1024) {
    TuningConfig c = base;
    c.kc = base.kc * 2;
    add(c);
  }
  addRows();
  // Half the column block (more, smaller workgroups).
  if (base.nb / 2 >= base.nr) {
    TuningConfig c = base;
    c.nb = base.nb / 2 / base.nr * base.nr;
    add(c);
  }
  return out;
}

/// Whether a database configuration can lower `op` on `target`: the
/// target's vector width, and channels in lanes only where the kernel
/// supports it (a database is input: it may come from elsewhere).
bool configFits(Operation *op, const TuningConfig &c, CPUTargetAttr target) {
  if (c.lanes != chooseGemmTiling(target).getLanes()) return false;
  auto conv = llvm::dyn_cast<ConvOp>(op);
  if (!conv || c.algorithm.empty()) return true;
  auto tiling = GemmTilingAttr::get(op->getContext(), c.mr, c.nr, c.lanes, c.mb, c.nb, c.kc);
  if (c.algorithm == "channel_lanes") return channelLanesEligible(conv, tiling);
  return winogradEligible(conv, tiling);
}

struct ApplyTuningPass : impl::ApplyTuningBase<ApplyTuningPass> {
  using ApplyTuningBase::ApplyTuningBase;
  ApplyTuningPass(const TuningOptions &options) : hooks(options) {
    db = options.dbPath;
    candidate = options.candidate;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target = module->getAttrOfType<CPUTargetAttr>("v4f.target");
    if (!target) {
      module.emitError("v4f-apply-tuning needs the module attribute v4f.target (run v4f-select-cpu-strategy)");
      return signalPassFailure();
    }
    std::string targetName = tuningTarget(module);
    std::map<std::string, TuningConfig> winners;
    if (!db.empty()) {
      std::vector<TuningEntry> entries;
      std::string error;
      if (!readTuningDatabase(db, entries, error)) {
        module.emitError(error);
        return signalPassFailure();
      }
      for (const TuningEntry &e : entries)
        if (e.target == targetName && e.codegen == kCodegenVersion) winners[e.key] = e.config;
    }
    int64_t tunable = 0, applied = 0, unfit = 0;
    module.walk([&](Operation *op) {
      if (!isTunable(op)) return;
      ++tunable;
      std::vector<TuningConfig> list = candidates(op, target);
      TuningConfig chosen = list.front();
      if (candidate >= 0 && size_t(candidate) < list.size()) chosen = list[size_t(candidate)];
      std::string key = tuningKey(op);
      if (!db.empty()) {
        auto it = winners.find(key);
        if (it != winners.end() && configFits(op, it->second, target)) {
          chosen = it->second;
          ++applied;
        } else if (it != winners.end()) {
          ++unfit;
        }
      }
      applyConfig(op, chosen);
      if (hooks.assigned) hooks.assigned->push_back({dispatchName(op), key, targetName, int(list.size()), chosen});
    });
    if (hooks.notes && !db.empty())
      hooks.notes->push_back(llvm::formatv("tuning: {0} of {1} matmuls/convs from {2} (target {3}, {4}){5}", applied,
                                           tunable, db, targetName, kCodegenVersion,
                                           unfit ? llvm::formatv("; {0} entries ignored: their configuration does "
                                                                 "not fit the op on this target",
                                                                 unfit)
                                                       .str()
                                                 : std::string())
                                 .str());
  }

  TuningOptions hooks;
};

llvm::json::Value toJson(const TuningConfig &c) {
  return llvm::json::Object{{"algorithm", c.algorithm},
                            {"mr", c.mr},
                            {"nr", c.nr},
                            {"lanes", c.lanes},
                            {"mb", c.mb},
                            {"nb", c.nb},
                            {"kc", c.kc}};
}

bool fromJson(const llvm::json::Object *o, TuningConfig &c) {
  if (!o) return false;
  auto get = [&](const char *name, int64_t &v, int64_t lo, int64_t hi) {
    std::optional<int64_t> x = o->getInteger(name);
    if (!x || *x < lo || *x > hi) return false;
    v = *x;
    return true;
  };
  std::optional<llvm::StringRef> algorithm = o->getString("algorithm");
  if (!algorithm || (!algorithm->empty() && *algorithm != "channel_lanes" && !winogradTileOf(*algorithm))) return false;
  c.algorithm = algorithm->str();
  if (!get("mr", c.mr, 1, 64) || !get("nr", c.nr, 1, 256) || !get("lanes", c.lanes, 1, 64) ||
      !get("mb", c.mb, 1, 4096) || !get("nb", c.nb, 1, 8192) || !get("kc", c.kc, 8, 8192))
    return false;
  // The kernels' invariants: whole vectors per column tile, blocks of whole
  // tiles.
  return c.nr % c.lanes == 0 && c.nb % c.nr == 0 && c.mb >= c.mr;
}

} // namespace

std::unique_ptr<Pass> createApplyTuningPass(const TuningOptions &options) {
  return std::make_unique<ApplyTuningPass>(options);
}

std::string tuningKey(Operation *op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op->getName().getStringRef() << "(";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << ")->";
  llvm::interleaveComma(op->getResultTypes(), os);
  // The op's own attributes (strides, pads, activation, ...), not the
  // lowering choices (v4f.*) nor locations.
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : op->getAttrs())
    if (!a.getName().getValue().starts_with("v4f.")) attrs.push_back(a);
  llvm::sort(attrs, [](NamedAttribute a, NamedAttribute b) { return a.getName().getValue() < b.getName().getValue(); });
  os << "{";
  llvm::interleaveComma(attrs, os, [&](NamedAttribute a) { os << a.getName().getValue() << "=" << a.getValue(); });
  os << "}";
  return key;
}

std::string tuningTarget(Operation *module) {
  auto target = module->getAttrOfType<CPUTargetAttr>("v4f.target");
  if (!target) return "";
  return (target.getCpu() + "/" + target.getIsa()).str();
}

bool readTuningDatabase(const std::string &path, std::vector<TuningEntry> &entries, std::string &error,
                        bool missingOk) {
  if (missingOk && !llvm::sys::fs::exists(path)) return true;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = path + ": cannot read the tuning database: " + buffer.getError().message();
    return false;
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = path + ": not a tuning database (invalid JSON: " + llvm::toString(parsed.takeError()) + ")";
    return false;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != "v4f-tuning-db" || root->getInteger("version") != 1 ||
      !root->getArray("entries")) {
    error = path + ": not a tuning database (expected {\"format\": \"v4f-tuning-db\", \"version\": 1, "
                   "\"entries\": [...]}, as v4fc tune writes)";
    return false;
  }
  size_t index = 0;
  for (const llvm::json::Value &v : *root->getArray("entries")) {
    const llvm::json::Object *o = v.getAsObject();
    TuningEntry e;
    bool ok = o && o->getString("key") && o->getString("target") && o->getString("codegen");
    if (ok) {
      e.key = o->getString("key")->str();
      e.target = o->getString("target")->str();
      e.codegen = o->getString("codegen")->str();
      e.threads = o->getInteger("threads").value_or(1);
      e.ms = o->getNumber("ms").value_or(0);
      e.defaultMs = o->getNumber("default_ms").value_or(0);
      ok = fromJson(o->getObject("config"), e.config);
    }
    if (!ok) {
      error = path + ": tuning database entry " + std::to_string(index) +
              " is malformed (needs key, target, codegen and a config with algorithm \"\", \"channel_lanes\", "
              "\"winograd_2x2\", \"winograd_4x4\" or \"winograd_4x4_direct_weights\", "
              "mr, nr, lanes, mb, nb, kc in range, nr a multiple of lanes, nb of nr)";
      return false;
    }
    entries.push_back(std::move(e));
    ++index;
  }
  return true;
}

bool writeTuningDatabase(const std::string &path, const std::vector<TuningEntry> &entries, std::string &error) {
  llvm::json::Array list;
  for (const TuningEntry &e : entries)
    list.push_back(llvm::json::Object{{"key", e.key},
                                      {"target", e.target},
                                      {"codegen", e.codegen},
                                      {"threads", e.threads},
                                      {"config", toJson(e.config)},
                                      {"ms", e.ms},
                                      {"default_ms", e.defaultMs}});
  llvm::json::Object root{{"format", "v4f-tuning-db"}, {"version", 1}, {"entries", std::move(list)}};
  std::string tmp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec) {
      error = tmp + ": cannot create: " + ec.message();
      return false;
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    os.close();
    if (os.has_error()) {
      error = tmp + ": write failed";
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    error = path + ": cannot replace: " + ec.message();
    llvm::sys::fs::remove(tmp);
    return false;
  }
  return true;
}

} // namespace v4f
