// build_id.cpp: reads the GNU build-ID note of the loaded object that contains this function
// (dl_iterate_phdr over the program headers of every loaded object; the one whose PT_LOAD
// segments hold our address), or falls back to stat() of the file dladdr() names.
#include "cache/build_id.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>

namespace tessera::detail {
namespace {

struct Search {
  std::uintptr_t address = 0;
  std::string id;
};

int visit(dl_phdr_info* info, std::size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  bool ours = false;
  for (int i = 0; i < info->dlpi_phnum && !ours; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    ours = ph.p_type == PT_LOAD && s->address >= start && s->address < start + ph.p_memsz;
  }
  if (!ours) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const char* name = p + sizeof note;
      const char* desc = name + ((note.n_namesz + 3) & ~3u);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + note.n_descsz <= end) {
        static const char digits[] = "0123456789abcdef";
        for (unsigned k = 0; k < note.n_descsz; ++k) {
          auto byte = static_cast<unsigned char>(desc[k]);
          s->id += digits[byte >> 4];
          s->id += digits[byte & 15];
        }
        return 1;
      }
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return 1;  // our object, without a build ID
}

std::string compute() {
  Search s;
  s.address = reinterpret_cast<std::uintptr_t>(&visit);
  dl_iterate_phdr(&visit, &s);
  if (!s.id.empty()) return "build-id:" + s.id;
  Dl_info info{};
  struct stat st {};
  if (dladdr(reinterpret_cast<void*>(&visit), &info) && info.dli_fname && stat(info.dli_fname, &st) == 0)
    return std::string("file:") + info.dli_fname + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  return "";
}

}  // namespace

const std::string& self_build_id() {
  static const std::string id = compute();
  return id;
}

}  // namespace tessera::detail
