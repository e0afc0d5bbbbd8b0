//===- PassRegistration.cpp - tessera's LLVM IR passes by name ------------===//
//
// registerPasses: a PassBuilder callback that turns the textual names of
// tessera's LLVM IR passes (Passes.h), with their parameters
// (`name<key=value;flag;no-flag>`, LLVM's syntax), into the passes. Bad
// parameters do not make the name unknown (PassBuilder would then only say
// "unknown pass name"): the name gets a pass that reports what was wrong, as
// an error diagnostic, when it runs.
//
//===----------------------------------------------------------------------===//

#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"

#include <limits>
#include <optional>

using namespace llvm;
using namespace mlir::tessera::llvmir;

namespace {

/// Stands for a pass whose parameters did not parse: reports `message` as an
/// error and changes nothing.
struct InvalidParametersPass : PassInfoMixin<InvalidParametersPass> {
  explicit InvalidParametersPass(std::string message)
      : message(std::move(message)) {}
  std::string message;
  PreservedAnalyses run(Module &m, ModuleAnalysisManager &) {
    m.getContext().emitError(message);
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

/// The parameters of one pass: `key=value` pairs and flags (`flag` or
/// `no-flag`), separated by `;`.
struct Parameters {
  std::string kernel;
  std::optional<int64_t> threadsPerProgram;
  bool gridDependencyControl = true;
  LaunchShape shape;
};

/// Parses `params` for the pass `name`, which accepts the keys in `keys`
/// ("kernel", "threads-per-program", "griddepcontrol", "ctas-per-program",
/// "programs-per-cta", "dynamic-shared-bytes").
Expected<Parameters> parse(StringRef name, StringRef params,
                           ArrayRef<StringRef> keys) {
  Parameters p;
  auto fail = [&](const Twine &what) {
    return make_error<StringError>(name + ": " + what,
                                   inconvertibleErrorCode());
  };
  auto accepts = [&](StringRef key) { return is_contained(keys, key); };
  SmallVector<StringRef> items;
  params.split(items, ';', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    if (!item.contains('=')) {
      // A flag: `griddepcontrol` or `no-griddepcontrol`.
      bool enable = !key.consume_front("no-");
      if (key != "griddepcontrol" || !accepts(key))
        return fail("unknown parameter '" + item + "'");
      p.gridDependencyControl = enable;
      continue;
    }
    if (key == "griddepcontrol" || !accepts(key))
      return fail("unknown parameter '" + key + "'");
    if (key == "kernel") {
      if (value.empty())
        return fail("kernel= needs the kernel's symbol");
      p.kernel = value.str();
      continue;
    }
    int64_t n;
    if (value.getAsInteger(10, n) || n < 0 ||
        n > std::numeric_limits<int32_t>::max())
      return fail("'" + key + "' must be an integer from 0 to 2^31 - 1, got '" +
                  value + "'");
    if (key == "threads-per-program")
      p.threadsPerProgram = n;
    else if (key == "ctas-per-program")
      p.shape.ctasPerProgram = static_cast<int>(n);
    else if (key == "programs-per-cta")
      p.shape.programsPerCta = static_cast<int>(n);
    else
      p.shape.dynamicSharedBytes = static_cast<int>(n);
  }
  if (accepts("kernel") && p.kernel.empty())
    return fail("expects kernel=<symbol>");
  if (accepts("threads-per-program") && !p.threadsPerProgram)
    return fail("expects threads-per-program=<T>");
  return p;
}

/// Adds the pass named `name` (with its parameters) to `mpm`; false if the
/// name is none of tessera's.
bool addPass(StringRef name, ModulePassManager &mpm) {
  // Name, accepted keys, and the pass made from the parsed parameters.
  struct Entry {
    StringLiteral name;
    SmallVector<StringRef, 3> keys;
    void (*add)(ModulePassManager &, Parameters &);
  };
  const Entry entries[] = {
      {"tessera-packed-wrapper",
       {"kernel"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(PackedWrapperPass(p.kernel));
       }},
      {"tessera-define-bf16-truncation",
       {},
       [](ModulePassManager &pm, Parameters &) {
         pm.addPass(DefineBF16TruncationPass());
       }},
      {"tessera-stack-checks",
       {},
       [](ModulePassManager &pm, Parameters &) {
         pm.addPass(StackChecksPass());
       }},
      {"tessera-share-divisors",
       {"kernel"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(ShareDivisorsPass(p.kernel));
       }},
      {"tessera-widen-bf16-pairs",
       {"kernel"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(WidenBF16PairsPass(p.kernel));
       }},
      {"tessera-sink-pure-ops",
       {"kernel"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(SinkPureOpsPass(p.kernel));
       }},
      {"tessera-launch-comments",
       {"ctas-per-program", "programs-per-cta", "dynamic-shared-bytes"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(LaunchCommentsPass(p.shape));
       }},
      {"tessera-mark-read-only-noalias",
       {"kernel"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(MarkReadOnlyNoAliasPass(p.kernel));
       }},
      {"tessera-mark-grid-waits-convergent",
       {"kernel"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(MarkGridWaitsConvergentPass(p.kernel));
       }},
      {"tessera-mark-aligned-asm-convergent",
       {"kernel"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(MarkAlignedAsmConvergentPass(p.kernel));
       }},
      {"tessera-grid-dependency-wait",
       {"kernel", "griddepcontrol"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(GridDependencyWaitPass(p.kernel, p.gridDependencyControl));
       }},
      {"tessera-skip-programs-past-the-end",
       {"kernel", "threads-per-program"},
       [](ModulePassManager &pm, Parameters &p) {
         pm.addPass(SkipProgramsPastTheEndPass(
             p.kernel, static_cast<unsigned>(*p.threadsPerProgram)));
       }},
  };
  for (const Entry &e : entries) {
    if (!PassBuilder::checkParametrizedPassName(name, e.name))
      continue;
    Expected<Parameters> p = PassBuilder::parsePassParameters(
        [&](StringRef params) { return parse(e.name, params, e.keys); }, name,
        e.name);
    if (!p) {
      mpm.addPass(InvalidParametersPass(toString(p.takeError())));
      return true;
    }
    e.add(mpm, *p);
    return true;
  }
  return false;
}

} // namespace

void mlir::tessera::llvmir::registerPasses(PassBuilder &pb) {
  pb.registerPipelineParsingCallback(
      [](StringRef name, ModulePassManager &mpm,
         ArrayRef<PassBuilder::PipelineElement>) {
        return addPass(name, mpm);
      });
}
