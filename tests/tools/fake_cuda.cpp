// fake_cuda.cpp: a stand-in libcuda.so.1 for smoke-testing tessera's GPU code paths on machines
// without a GPU (test execution.fake_gpu_smoke, with tools/gpu_smoke.cpp). Not a GPU: device memory
// is host memory, every copy happens at once, kernels do not run (a launch only checks its
// arguments), events are reached when recorded. It checks what it can about how it is called
// (handles that exist, events recorded before they are waited for, non-zero grids, parameters
// present, dynamic shared memory above 48 KiB opted into by cuFuncSetAttribute before a launch or a
// graph node passes it) and counts the calls, which the smoke program reads through fake_cuda_counts(); it can
// hold other threads' launches inside the driver call or fail the next launches
// (fake_cuda_hold_launches, fake_cuda_fail_launches). Its device has 16 GiB: a larger allocation
// fails with CUDA_ERROR_OUT_OF_MEMORY (and cuMemGetInfo reports what is left).
// Implements the entry points of runtime/cuda_functions.def, with its signatures, and answers
// cuGetExportTable (which NVRTC looks up in any libcuda it finds) with "not found".
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "driver/cuda_driver.h"

using namespace tessera::detail;

namespace {

constexpr CUresult kInvalidValue = 1;
constexpr CUresult kInvalidHandle = 400;

struct Counts {
  std::atomic<long> launches{0}, event_records{0}, stream_waits{0}, uploads{0}, downloads{0}, graph_creates{0},
      graph_nodes{0}, graph_param_sets{0}, graph_launches{0}, errors{0}, programmatic_launches{0}, graph_edges{0},
      programmatic_edges{0}, memsets{0}, shared_opt_ins{0}, dynamic_shared_launches{0}, dynamic_shared_nodes{0},
      last_shared_bytes{0}, last_block_threads{0};
};
constexpr size_t kDeviceBytes = size_t{1} << 34;
std::atomic<size_t> allocated{0};  // bytes, rounded up to 256
Counts counts;

// Test hooks (fake_cuda_hold_launches, fake_cuda_fail_launches).
std::atomic<bool> hold_launches{false};
std::thread::id holder;              // its launches are not held
std::atomic<long> held_now{0};       // launches waiting in the hold
std::atomic<long> launches_to_fail{0};

std::mutex mutex;
std::set<void*> streams, events, recorded_events, modules, graphs, execs;
std::map<void*, int> opted_in;  // per function: the dynamic shared memory it may pass above 48 KiB

constexpr unsigned kSharedWithoutOptIn = 48 * 1024;
constexpr int kSharedOptInLimit = 227 * 1024;  // an H200's (sm_90)

struct Handle {
  int tag;
};

CUresult bad() {
  counts.errors++;
  return kInvalidHandle;
}
template <class T>
T make(std::set<void*>& set) {
  auto* h = new Handle{0};
  std::lock_guard lock(mutex);
  set.insert(h);
  return reinterpret_cast<T>(h);
}
bool known(std::set<void*>& set, void* h) {
  std::lock_guard lock(mutex);
  return set.count(h) != 0;
}
bool drop(std::set<void*>& set, void* h) {
  std::lock_guard lock(mutex);
  if (!set.erase(h)) return false;
  delete static_cast<Handle*>(h);
  return true;
}
// A stream argument: null (the legacy stream) or one we made.
bool stream_ok(CUstream s) { return s == nullptr || known(streams, s); }
// Whether `f` may be launched with `shared` bytes of dynamic shared memory.
bool shared_ok(CUfunction f, unsigned shared) {
  if (shared <= kSharedWithoutOptIn) return true;
  std::lock_guard lock(mutex);
  auto it = opted_in.find(f);
  return it != opted_in.end() && shared <= static_cast<unsigned>(it->second);
}

}  // namespace

extern "C" {

// The counters, in this order: launches, event_records, stream_waits, uploads, downloads,
// graph_creates, graph_nodes, graph_param_sets, graph_launches, errors, programmatic_launches,
// graph_edges, programmatic_edges, memsets, shared_opt_ins (cuFuncSetAttribute of the dynamic shared
// memory), dynamic_shared_launches and dynamic_shared_nodes (launches and graph nodes, added or
// set, passing dynamic shared memory), last_shared_bytes (of the last launch or graph node),
// last_block_threads (the threads per block of the last launch).
void fake_cuda_counts(long* out) {
  const std::atomic<long>* all[] = {&counts.launches,      &counts.event_records, &counts.stream_waits,
                                    &counts.uploads,       &counts.downloads,     &counts.graph_creates,
                                    &counts.graph_nodes,   &counts.graph_param_sets, &counts.graph_launches,
                                    &counts.errors,   &counts.programmatic_launches, &counts.graph_edges,
                                    &counts.programmatic_edges, &counts.memsets, &counts.shared_opt_ins,
                                    &counts.dynamic_shared_launches, &counts.dynamic_shared_nodes,
                                    &counts.last_shared_bytes, &counts.last_block_threads};
  for (int i = 0; i < 19; ++i) out[i] = all[i]->load();
}

// While held, kernel launches made by other threads than the caller wait inside the driver call
// (as if the driver were slow). Returns how many launches are waiting there now.
long fake_cuda_hold_launches(int hold) {
  if (hold >= 0) {
    holder = std::this_thread::get_id();
    hold_launches.store(hold != 0);
  }
  return held_now.load();
}
// The next n kernel launches fail (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) without being counted.
void fake_cuda_fail_launches(long n) { launches_to_fail.store(n); }

CUresult cuInit(unsigned) { return kCudaSuccess; }
// NVIDIA's private tables (NVRTC asks when it finds a libcuda): none here.
CUresult cuGetExportTable(const void** table, const void*) {
  *table = nullptr;
  return 500;  // CUDA_ERROR_NOT_FOUND
}
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return kCudaSuccess;
}
CUresult cuGetErrorString(CUresult, const char** text) {
  *text = "fake CUDA error";
  return kCudaSuccess;
}
CUresult cuGetErrorName(CUresult, const char** name) {
  *name = "CUDA_ERROR_FAKE";
  return kCudaSuccess;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? kCudaSuccess : kInvalidValue;
}
CUresult cuDeviceGetCount(int* n) {
  *n = 1;
  return kCudaSuccess;
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
  *value = attribute == kAttrComputeCapabilityMajor         ? 9
           : attribute == kAttrComputeCapabilityMinor       ? 0
           : attribute == kAttrMaxSharedMemoryPerBlockOptin ? kSharedOptInLimit
           : attribute == kAttrMultiprocessorCount          ? 132
                                                            : 49152;
  return kCudaSuccess;
}
CUresult cuDeviceGetName(char* name, int length, CUdevice) {
  std::strncpy(name, "Fake GPU (tests/tools/fake_cuda.cpp)", static_cast<std::size_t>(length));
  return kCudaSuccess;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  static Handle context{1};
  *c = reinterpret_cast<CUcontext>(&context);
  return kCudaSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return kCudaSuccess; }
CUresult cuCtxSetCurrent(CUcontext) { return kCudaSuccess; }
CUresult cuCtxSynchronize() { return kCudaSuccess; }

// A cubin (ELF) or PTX text (the tensor-core kernels load their PTX).
CUresult cuModuleLoadData(CUmodule* m, const void* image) {
  if (!image || (std::memcmp(static_cast<const char*>(image) + 1, "ELF", 3) != 0 &&
                 !std::strstr(static_cast<const char*>(image), ".entry")))
    return bad();
  *m = make<CUmodule>(modules);
  return kCudaSuccess;
}
CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned, int*, void**) {
  return cuModuleLoadData(m, image);
}
CUresult cuModuleUnload(CUmodule m) {
  {
    std::lock_guard lock(mutex);
    opted_in.erase(m);  // its function's opt-in (a function is its module here)
  }
  return drop(modules, m) ? kCudaSuccess : bad();
}
CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  if (!known(modules, m) || !name || !*name) return bad();
  *f = reinterpret_cast<CUfunction>(m);  // a function is its module here
  return kCudaSuccess;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  if (!known(modules, f)) return bad();
  if (attribute != kFuncAttrMaxDynamicSharedSizeBytes) return kCudaSuccess;
  if (value < 0 || value > kSharedOptInLimit) {
    counts.errors++;
    return kInvalidValue;
  }
  std::lock_guard lock(mutex);
  opted_in[f] = value;
  counts.shared_opt_ins++;
  return kCudaSuccess;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream s, void** params, void**) {
  if (!known(modules, f) || !stream_ok(s) || !gx || !gy || !gz || !bx || !by || !bz || !params ||
      !shared_ok(f, shared))
    return bad();
  if (hold_launches.load() && std::this_thread::get_id() != holder) {
    held_now++;
    while (hold_launches.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    held_now--;
  }
  for (long n = launches_to_fail.load(); n > 0;)
    if (launches_to_fail.compare_exchange_weak(n, n - 1)) return 701;  // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
  counts.launches++;
  counts.dynamic_shared_launches += shared > 0 ? 1 : 0;
  counts.last_shared_bytes = shared;
  counts.last_block_threads = static_cast<long>(bx) * by * bz;
  return kCudaSuccess;
}

CUresult cuLaunchKernelEx(const LaunchConfig* c, CUfunction f, void** params, void**) {
  if (!c || (c->num_attrs && !c->attrs)) return bad();
  for (unsigned i = 0; i < c->num_attrs; ++i)
    if (c->attrs[i].id == kLaunchAttributeProgrammaticStreamSerialization &&
        c->attrs[i].value.programmatic_stream_serialization_allowed)
      counts.programmatic_launches++;
  return cuLaunchKernel(f, c->grid_x, c->grid_y, c->grid_z, c->block_x, c->block_y, c->block_z, c->shared_bytes,
                        c->stream, params, nullptr);
}

// The fake device's 132 SMs hold one CTA each, in clusters of any size up to 8.
CUresult cuOccupancyMaxActiveClusters(int* clusters, CUfunction f, const LaunchConfig* c) {
  if (!clusters || !f || !c || c->grid_x == 0 || c->grid_x > 8 || c->block_x == 0) return bad();
  *clusters = static_cast<int>(132 / c->grid_x);
  return kCudaSuccess;
}

// Each allocation is preceded by a header of 256 bytes holding its size (for cuMemFree).
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  if (bytes == 0 || bytes > kDeviceBytes) return kCudaErrorOutOfMemory;
  const size_t rounded = (bytes + 255) / 256 * 256;
  if (allocated.fetch_add(rounded) + rounded > kDeviceBytes) {
    allocated.fetch_sub(rounded);
    return kCudaErrorOutOfMemory;
  }
  auto* m = static_cast<char*>(std::aligned_alloc(256, rounded + 256));
  if (!m) {
    allocated.fetch_sub(rounded);
    return kCudaErrorOutOfMemory;
  }
  std::memcpy(m, &rounded, sizeof rounded);
  std::memset(m + 256, 0xcd, bytes);  // like uninitialized device memory
  *p = reinterpret_cast<CUdeviceptr>(m + 256);
  return kCudaSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  if (!p) return kCudaSuccess;
  char* m = reinterpret_cast<char*>(p) - 256;
  size_t rounded = 0;
  std::memcpy(&rounded, m, sizeof rounded);
  allocated.fetch_sub(rounded);
  std::free(m);
  return kCudaSuccess;
}
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  *total = kDeviceBytes;
  *free_bytes = kDeviceBytes - allocated.load();
  return kCudaSuccess;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* h, size_t n) {
  std::memcpy(reinterpret_cast<void*>(d), h, n);
  counts.uploads++;
  return kCudaSuccess;
}
CUresult cuMemcpyDtoH_v2(void* h, CUdeviceptr d, size_t n) {
  std::memcpy(h, reinterpret_cast<const void*>(d), n);
  counts.downloads++;
  return kCudaSuccess;
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void*>(d), v, n);
  return kCudaSuccess;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  if (!stream_ok(s)) return bad();
  std::memset(reinterpret_cast<void*>(d), v, n);
  counts.memsets++;
  return kCudaSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* h, size_t n, CUstream s) {
  if (!stream_ok(s)) return bad();
  return cuMemcpyHtoD_v2(d, h, n);
}
CUresult cuMemcpyDtoHAsync_v2(void* h, CUdeviceptr d, size_t n, CUstream s) {
  if (!stream_ok(s)) return bad();
  return cuMemcpyDtoH_v2(h, d, n);
}
CUresult cuPointerGetAttribute(void*, CUpointer_attribute, CUdeviceptr) { return kInvalidValue; }
// Checks what the real driver checks of a 2-d tiled map (address and strides 16-byte aligned, box
// of 1 to 256 elements per dimension, inner box within the swizzle span) and writes a recognizable
// pattern (the address and the dims) instead of a real map.
CUresult cuTensorMapEncodeTiled(TensorMapBytes* map, int, unsigned rank, void* address, const std::uint64_t* dims,
                                const std::uint64_t* strides, const unsigned* box, const unsigned*, int, int,
                                int, int) {
  if (!map || rank != 2 || reinterpret_cast<std::uintptr_t>(address) % 16 != 0 || strides[0] % 16 != 0 ||
      box[0] < 1 || box[0] > 256 || box[1] < 1 || box[1] > 256)
    return kInvalidValue;
  *map = {};
  map->words[0] = reinterpret_cast<std::uint64_t>(address);
  map->words[1] = dims[0];
  map->words[2] = dims[1];
  return kCudaSuccess;
}

CUresult cuStreamCreate(CUstream* s, unsigned) {
  *s = make<CUstream>(streams);
  return kCudaSuccess;
}
CUresult cuStreamDestroy_v2(CUstream s) { return drop(streams, s) ? kCudaSuccess : bad(); }
CUresult cuStreamSynchronize(CUstream s) { return stream_ok(s) ? kCudaSuccess : bad(); }
CUresult cuStreamQuery(CUstream s) { return stream_ok(s) ? kCudaSuccess : bad(); }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned) {
  std::lock_guard lock(mutex);
  if ((s && !streams.count(s)) || !events.count(e) || !recorded_events.count(e)) {
    counts.errors++;
    return kInvalidHandle;
  }
  counts.stream_waits++;
  return kCudaSuccess;
}

CUresult cuEventCreate(CUevent* e, unsigned) {
  *e = make<CUevent>(events);
  return kCudaSuccess;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  if (!known(events, e) || !stream_ok(s)) return bad();
  std::lock_guard lock(mutex);
  recorded_events.insert(e);
  counts.event_records++;
  return kCudaSuccess;
}
CUresult cuEventQuery(CUevent e) {
  std::lock_guard lock(mutex);
  if (!recorded_events.count(e)) {
    counts.errors++;
    return kInvalidHandle;
  }
  return kCudaSuccess;
}
CUresult cuEventSynchronize(CUevent e) { return cuEventQuery(e); }
CUresult cuEventElapsedTime_v2(float* ms, CUevent a, CUevent b) {
  if (cuEventQuery(a) || cuEventQuery(b)) return kInvalidHandle;
  *ms = 0.001f;
  return kCudaSuccess;
}
CUresult cuEventDestroy_v2(CUevent e) {
  {
    std::lock_guard lock(mutex);
    recorded_events.erase(e);
  }
  return drop(events, e) ? kCudaSuccess : bad();
}

CUresult cuGraphCreate(CUgraph* g, unsigned) {
  *g = make<CUgraph>(graphs);
  counts.graph_creates++;
  return kCudaSuccess;
}
CUresult cuGraphDestroy(CUgraph g) { return drop(graphs, g) ? kCudaSuccess : bad(); }
CUresult cuGraphAddKernelNode_v2(CUgraphNode* node, CUgraph g, const CUgraphNode*, size_t,
                                 const KernelNodeParams* p) {
  if (!known(graphs, g) || !p || !known(modules, p->func) || !p->grid_x || !p->grid_y || !p->grid_z ||
      !p->block_x || !p->kernel_params || !shared_ok(p->func, p->shared_bytes))
    return bad();
  *node = reinterpret_cast<CUgraphNode>(new Handle{2});  // leaked: a test tool
  counts.graph_nodes++;
  counts.dynamic_shared_nodes += p->shared_bytes > 0 ? 1 : 0;
  counts.last_shared_bytes = p->shared_bytes;
  return kCudaSuccess;
}
CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, const GraphEdgeData* edges,
                                   size_t count) {
  if (!known(graphs, g) || (count && (!from || !to || !edges))) return bad();
  for (size_t i = 0; i < count; ++i) {
    bool programmatic = edges[i].type == kGraphDependencyTypeProgrammatic;
    if (programmatic != (edges[i].from_port == kGraphKernelNodePortProgrammatic)) return bad();
    counts.graph_edges++;
    counts.programmatic_edges += programmatic ? 1 : 0;
  }
  return kCudaSuccess;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g, unsigned long long) {
  if (!known(graphs, g)) return bad();
  *e = make<CUgraphExec>(execs);
  return kCudaSuccess;
}
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec e, CUgraphNode n, const KernelNodeParams* p) {
  if (!known(execs, e) || !n || !p || !known(modules, p->func) || !p->kernel_params ||
      !shared_ok(p->func, p->shared_bytes))
    return bad();
  counts.graph_param_sets++;
  counts.dynamic_shared_nodes += p->shared_bytes > 0 ? 1 : 0;
  counts.last_shared_bytes = p->shared_bytes;
  return kCudaSuccess;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
  if (!known(execs, e) || !stream_ok(s)) return bad();
  counts.graph_launches++;
  return kCudaSuccess;
}
CUresult cuGraphExecDestroy(CUgraphExec e) { return drop(execs, e) ? kCudaSuccess : bad(); }

}  // extern "C"
