# lit configuration of tessera's FileCheck tests: the tile dialect and the MLIR passes (.mlir,
# tessera-opt), the LLVM IR passes (.ll, tessera-llvm-opt).
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "tessera"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".ll"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = getattr(config, "tessera_lit_obj", config.test_source_root)

llvm_config.use_default_substitutions()
# LLVM tools (FileCheck, not, count, ...) are also found through PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.tessera_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    [ToolSubst("tessera-opt", unresolved="fatal"),
     ToolSubst("tessera-llvm-opt", unresolved="fatal"),
     ToolSubst("tessera-tileir-translate", unresolved="fatal"),
     ToolSubst("mlir-translate", unresolved="fatal"),
     ToolSubst("llc", unresolved="fatal"),
     ToolSubst("mlir-runner", unresolved="fatal"),
     ToolSubst("FileCheck", unresolved="fatal"),
     ToolSubst("not", unresolved="fatal")],
    tool_dirs)

# Runtime support libraries for mlir-runner (printMemrefF32, ...).
llvm_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(
    ("%mlir_runner_utils", os.path.join(llvm_lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils", os.path.join(llvm_lib_dir, "libmlir_c_runner_utils.so")))

# NVIDIA's tileirdisasm (Tile IR bytecode -> text), beside the tileiras that tessera finds
# (src/compiler/tileiras.h: TESSERA_TILEIRAS, the install location of scripts/install-tileiras.sh,
# PATH). Tests of the bytecode writer that read it back say `REQUIRES: tileirdisasm`.
def find_tileirdisasm():
    import shutil
    if os.environ.get("TESSERA_TILEIRAS"):
        return os.path.join(os.path.dirname(os.environ["TESSERA_TILEIRAS"]), "tileirdisasm")
    home = os.environ.get("TESSERA_TILEIRAS_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "tessera", "tileiras")
    candidate = os.path.join(home, "nvidia", "cu13", "bin", "tileirdisasm")
    return candidate if os.path.isfile(candidate) else shutil.which("tileirdisasm")

tileirdisasm = find_tileirdisasm()
if tileirdisasm and os.path.isfile(tileirdisasm):
    config.available_features.add("tileirdisasm")
    config.substitutions.append(("%tileirdisasm", tileirdisasm))

