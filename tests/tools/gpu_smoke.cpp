// gpu_smoke.cpp: drives tessera's GPU code paths against the fake driver (tools/fake_cuda.cpp,
// test execution.fake_gpu_smoke), which runs no kernels: results are not checked, the driver calls
// are. Checks: a chain of async launches records no event until the host waits (GPU timelines);
// work on two streams is joined with stream waits; synchronous and timed launches; a graph is built
// once, patched only for changed Scalars or rebinds and rebuilt when a rebind changes the sharing;
// tile kernels are launched programmatically and a chain in a graph gets one programmatic edge per
// link;
// a foreign stream and a device borrow; foreign device memory released after its last use; an
// unsafe CUDA kernel; a reduction whose scratch exceeds 48 KiB opts its function into that dynamic
// shared memory once and passes it at every launch (synchronous, async, queued for the launcher
// thread, graph node); in a burst, async launches on the pool return before the driver call (a
// launcher thread makes it) and a launch the driver rejects there is reported; new tensors zeroed
// on the device instead of uploaded, a failed device allocation reported with the bytes free, an
// overlapping output refused before any driver call; a kernel through the tileir backend launched
// with one thread per CTA, not programmatically; and that the fake saw no invalid call.
// Prints what it did; exits non-zero on a failed check.
#include <tessera/tessera.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace tessera;

namespace {

struct Counts {
  long launches, event_records, stream_waits, uploads, downloads, graph_creates, graph_nodes, graph_param_sets,
      graph_launches, errors, programmatic_launches, graph_edges, programmatic_edges, memsets, shared_opt_ins,
      dynamic_shared_launches, dynamic_shared_nodes, last_shared_bytes, last_block_threads;
};

Counts counts() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto fn = lib ? reinterpret_cast<void (*)(long*)>(dlsym(lib, "fake_cuda_counts")) : nullptr;
  if (!fn) {
    std::printf("FAIL: the fake libcuda.so.1 is not the loaded driver\n");
    std::exit(1);
  }
  Counts c{};
  fn(&c.launches);
  return c;
}

// 1: other threads' launches wait in the driver; 0: they go on; -1: no change. Returns how many
// launches are waiting there.
long hold_others(int on) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return reinterpret_cast<long (*)(int)>(dlsym(lib, "fake_cuda_hold_launches"))(on);
}
void fail_launches(long n) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  reinterpret_cast<void (*)(long)>(dlsym(lib, "fake_cuda_fail_launches"))(n);
}

int failures = 0;
struct Skipped {};  // a check this machine's timing cannot exercise
void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

auto inc_kernel() {
  return kernel("smoke_inc", [](auto out, auto a) { return out.store(a.load_like(out) + c<1>); });
}

}  // namespace

int main() {
  if (!gpu_available()) {
    std::printf("FAIL: no GPU (the fake driver did not load)\n");
    return 1;
  }
  const Target gpu = Target::sm_90;
  LaunchOptions o;
  o.target = gpu;
  auto inc = inc_kernel();
  try {
    // 1. A chain of async launches: no event until the host waits, then one.
    Tensor<float, 1> a({4096}), b({4096});
    inc.launch(o, b.partition<1024>(), a);  // warm up: compile, load, allocate
    Counts c0 = counts();
    for (int i = 0; i < 100; ++i) {
      if (i % 2 == 0)
        inc.launch_async(o, a.partition<1024>(), b).detach();
      else
        inc.launch_async(o, b.partition<1024>(), a).detach();
    }
    (void)std::as_const(b)(0);  // the host waits for the last writer of b: one event, one download
    Counts c2 = counts();
    check(c2.launches - c0.launches == 100, "100 async launches reach the driver");
    check(c2.programmatic_launches - c0.programmatic_launches == 100,
          "tile kernels are launched with programmatic stream serialization");
    check(c2.event_records - c0.event_records <= 1,
          "a chain on one stream records no event; the host wait at most one covering the chain");
    check(c2.downloads - c0.downloads == 1, "a host read downloads once");
    (void)std::as_const(a)(0);
    check(counts().event_records == c2.event_records, "a later wait on the same stream reuses the event");

    // 2. Two streams joined by a launch that reads both.
    Stream s1 = Stream::create(), s2 = Stream::create();
    LaunchOptions o1 = o, o2 = o;
    o1.stream = s1;
    o2.stream = s2;
    Tensor<float, 1> x({2048}), p({2048}), q({2048}), r({2048});
    x.fill(1.0f);  // written by the host: uploaded when a kernel reads it
    auto add = kernel("smoke_add", [](auto out, auto u, auto v) { return out.store(u.load_like(out) + v.load_like(out)); });
    Counts c3 = counts();
    inc.launch_async(o1, p.partition<1024>(), x).detach();
    inc.launch_async(o2, q.partition<1024>(), x).detach();
    add.launch_async(o, r.partition<1024>(), p, q).wait();
    Counts c4 = counts();
    check(c4.stream_waits - c3.stream_waits >= 1, "a join waits for the other stream with cuStreamWaitEvent");
    check(c4.uploads - c3.uploads == 1, "x is uploaded once; p, q and r are not (written whole, never read back)");
    // An output the kernel reads back (o += u) is uploaded, with its input.
    auto accumulate = kernel("smoke_accumulate", [](auto out, auto u) { return out.store(out.load() + u.load_like(out)); });
    Tensor<float, 1> acc({2048}), u({2048});
    acc.fill(1.0f);
    u.fill(2.0f);
    accumulate.launch(o, acc.partition<1024>(), u);
    check(counts().uploads - c4.uploads == 2, "an output read back by its kernel is uploaded before the launch");

    // 3. Synchronous and timed launches.
    Counts c5 = counts();
    for (int i = 0; i < 10; ++i) inc.launch(o, b.partition<1024>(), a);
    double ms = inc.launch_timed(gpu, b.partition<1024>(), a);
    Counts c6 = counts();
    check(c6.launches - c5.launches == 11, "synchronous launches");
    check(ms > 0, "launch_timed measures with events");

    // 4. A graph: built once, patched only for what changed, rebuilt when the sharing changes.
    Scalar<int32_t> step(0);
    auto shift = kernel("smoke_shift", [](auto out, auto u, auto k) {
      return out.store(u.load_like(out) + cast<DType::f32>(k));
    });
    Tensor<float, 1> g0({2048}), g1({2048}), g2({2048}), other({2048});
    Graph g(gpu);
    {
      auto recording = g.capture();
      shift.launch(g1.partition<1024>(), g0, step);  // the only node with a Scalar
      inc.launch(g2.partition<1024>(), g1);
      inc.launch(other.partition<1024>(), x);
    }
    Counts c7 = counts();
    g.replay();
    Counts c8 = counts();
    check(c8.graph_creates - c7.graph_creates == 1 && c8.graph_nodes - c7.graph_nodes == 3,
          "the first replay builds a CUDA graph of 3 kernel nodes");
    for (int t = 1; t <= 4; ++t) {
      step.set(t);
      g.replay();
    }
    g.replay();
    g.replay_async().wait();
    Counts c9 = counts();
    check(c9.graph_param_sets - c8.graph_param_sets == 4, "4 Scalar changes patch one node each, unchanged replays none");
    check(c9.graph_launches - c7.graph_launches == 7, "7 replays, 7 cuGraphLaunch");
    check(c9.graph_creates == c8.graph_creates, "no rebuild for scalar changes");
    Tensor<float, 1> x2({2048});
    g.rebind(x, x2);  // same sharing: patch the node that reads x
    g.replay();
    Counts c10 = counts();
    check(c10.graph_creates == c9.graph_creates && c10.graph_param_sets - c9.graph_param_sets == 1,
          "a rebind patches the node using the tensor");
    g.rebind(x2, g2);  // now the third launch reads what the second writes: new edge, rebuild
    g.replay();
    Counts c11 = counts();
    check(c11.graph_creates - c10.graph_creates == 1, "a rebind that changes the sharing rebuilds the graph");

    // A chain of 6 tile kernels ping-ponging between two tensors: 5 programmatic edges (each
    // kernel also writes what the one two back wrote; that edge is implied and left out).
    Graph chain(gpu);
    {
      auto recording = chain.capture();
      for (int i = 0; i < 6; ++i) {
        if (i % 2 == 0)
          inc.launch(b.partition<1024>(), a);
        else
          inc.launch(a.partition<1024>(), b);
      }
    }
    chain.replay();
    Counts c11b = counts();
    check(c11b.graph_edges - c11.graph_edges == 5 && c11b.programmatic_edges - c11.programmatic_edges == 5,
          "a chain of 6 tile kernels is joined by 5 programmatic edges");

    // 5. A foreign stream and a device borrow.
    Stream mine = Stream::create();
    Stream foreign = Stream::from_cuda(mine.cuda_stream());
    LaunchOptions of = o;
    of.stream = foreign;
    inc.launch_async(of, p.partition<1024>(), x).detach();
    {
      auto borrow = borrow_for_device(p, foreign);
      check(borrow.device_ptr() != nullptr, "a device borrow gives the device address");
    }
    add.launch(o, r.partition<1024>(), p, q);  // after the borrow's end

    // 6. Foreign device memory, released after its last use.
    int released = 0;
    void* mem = std::aligned_alloc(256, 2048 * sizeof(float));
    {
      auto wrapped = Tensor<float, 1>::from_device(mem, {2048}, std::nullopt, [&] { ++released; });
      inc.launch_async(o, r.partition<1024>(), wrapped).detach();
    }
    synchronize();
    check(released == 1, "the release callback runs once the tensor and its work are gone");
    std::free(mem);

    // 7. An unsafe CUDA kernel, if NVRTC is here.
    try {
      auto fill = unsafe_cuda_kernel("smoke_fill", R"(
        extern "C" __global__ void smoke_fill(float* o, float v, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) o[i] = v;
        })");
      Counts c12 = counts();
      fill.launch(o, {.blocks = {16}, .threads = {128}}, unsafe::out(r), 2.0f, 2048);
      Counts c13 = counts();
      check(c13.launches - c12.launches == 1, "an unsafe CUDA kernel launches");
      check(c13.programmatic_launches == c12.programmatic_launches,
            "an unsafe kernel (no griddepcontrol.wait) is not launched programmatically");
    } catch (const Error& e) {
      std::printf("skipped unsafe kernel: %s\n", e.what());
    }

    // 7a. A kernel through the tileir backend (LaunchOptions::backend): one thread per CTA, no dynamic
    // shared memory, not programmatic (its code does not wait for the grids it depends on).
    try {
      LaunchOptions t = o;
      t.backend = Backend::tileir;
      Tensor<float, 1> ti({4096}), to({4096});
      Counts c16 = counts();
      inc.launch(t, to.partition<1024>(), ti);
      Counts c17 = counts();
      check(c17.launches - c16.launches == 1, "a tileir kernel launches");
      check(c17.last_block_threads == 1 && c17.last_shared_bytes == 0,
            "a tileir kernel runs one thread per CTA without dynamic shared memory");
      check(c17.programmatic_launches == c16.programmatic_launches, "a tileir kernel is not launched programmatically");
    } catch (const Error& e) {
      if (std::string(e.what()).find("needs NVIDIA's tileiras") == std::string::npos) throw;
      std::printf("skipped the tileir backend: %s\n", e.what());
    }

    // 7b. A reduction whose scratch (a 128x128 f32 tile, 64 KiB) exceeds the 48 KiB of static shared
    // memory: its function is opted into the dynamic shared memory once, and every launch passes it.
    auto colsum = kernel("smoke_colsum", [](auto out, auto a) {
      return out.store(sum<0>(load<128, 128>(a, c<0>, program_id<1>())));
    });
    Tensor<float, 2> big({128, 1024});
    Tensor<float, 2> sums({1, 1024});
    Counts c14 = counts();
    colsum.launch(o, sums.partition<1, 128>(), big);
    Counts c15 = counts();
    check(c15.shared_opt_ins - c14.shared_opt_ins == 1, "a kernel with 64 KiB of scratch opts into it at its first launch");
    check(c15.dynamic_shared_launches - c14.dynamic_shared_launches == 1 && c15.last_shared_bytes == 65536,
          "and its launch passes 65536 bytes of dynamic shared memory");
    colsum.launch(o, sums.partition<1, 128>(), big);
    for (int i = 0; i < 20; ++i) colsum.launch_async(o, sums.partition<1, 128>(), big).detach();
    synchronize();
    Counts c16 = counts();
    check(c16.shared_opt_ins == c15.shared_opt_ins, "the opt-in is made once per loaded function");
    check(c16.dynamic_shared_launches - c15.dynamic_shared_launches == 21 && c16.last_shared_bytes == 65536,
          "every launch passes the dynamic shared memory, also those an async burst queues");
    Graph big_graph(gpu);
    {
      auto recording = big_graph.capture();
      colsum.launch(sums.partition<1, 128>(), big);
    }
    big_graph.replay();
    Counts c17 = counts();
    check(c17.dynamic_shared_nodes - c16.dynamic_shared_nodes == 1 && c17.last_shared_bytes == 65536,
          "a graph node of the kernel passes its dynamic shared memory");

    // 7c. A launch of that kernel queued for a pool stream's launcher thread (its driver call held,
    // as in 8) passes the dynamic shared memory too.
    hold_others(1);
    long submitted = 0;
    bool queued = false;
    // Bounded in time too: under a sanitizer's scheduling a burst may take long to queue one.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (; submitted < 100000 && !queued && std::chrono::steady_clock::now() < give_up; ++submitted) {
      const long before = counts().launches;
      colsum.launch_async(o, sums.partition<1, 128>(), big).detach();
      queued = counts().launches == before;
    }
    if (queued) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (hold_others(-1) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    hold_others(0);
    synchronize();
    if (queued) {
      Counts c18 = counts();
      check(c18.dynamic_shared_launches - c17.dynamic_shared_launches == submitted && c18.last_shared_bytes == 65536,
            "a launch queued for the launcher thread passes the dynamic shared memory");
    } else {
      std::printf("skipped the queued launch with dynamic shared memory: no launch of the burst was queued\n");
    }


    // 8. New tensors: zeroed on the device, not uploaded (no host copy is made); too large a
    // tensor is an error naming the bytes; an overlapping output is refused before any driver call.
    {
      Tensor<float, 1> fresh({2048}), out({2048});
      Counts m0 = counts();
      inc.launch(o, out.partition<1024>(), fresh);
      Counts m1 = counts();
      check(m1.memsets - m0.memsets == 1 && m1.uploads == m0.uploads,
            "a new tensor read on the GPU is zeroed there (cuMemsetD8Async), not uploaded");
      check(fresh.storage()->zeros_unallocated(), "and has no host copy");
      {
        auto borrow = borrow_for_device(std::as_const(fresh), s1);
        // The fake's device memory is host memory.
        const float* device = static_cast<const float*>(borrow.device_ptr());
        check(device[0] == 0.0f && device[2047] == 0.0f, "its device copy holds zeros");
      }
      auto fill = kernel("smoke_fill", [](auto out) { return out.store(full<DType::f32, 1024>(c<2>)); });
      Tensor<float, 1> huge({5'000'000'000});  // 20 GB: more than the fake device's 16 GiB
      std::string message;
      try {
        fill.launch(o, huge.partition<1024>());
      } catch (const Error& e) {
        message = e.what();
      }
      check(message.find("kernel 'smoke_fill'") != std::string::npos &&
                message.find("cuMemAlloc of 20000000000 bytes") != std::string::npos &&
                message.find("free") != std::string::npos,
            "a device allocation that fails is an Error naming the kernel, the bytes and the free memory: " + message);
      check(huge.storage()->zeros_unallocated(), "and commits no host memory");
      inc.launch(o, out.partition<1024>(), fresh);  // the process goes on
      void* mem = std::aligned_alloc(256, 4096 * sizeof(float));
      auto rows = Tensor<float, 2>::from_device(mem, {64, 64}, std::array<int64_t, 2>{32, 1});
      Tensor<float, 2> m({64, 64});
      Counts m2 = counts();
      message.clear();
      try {
        inc.launch(o, rows.partition<16, 64>(), m);
      } catch (const Error& e) {
        message = e.what();
      }
      Counts m3 = counts();
      check(message.find("output parameter 0") != std::string::npos &&
                m3.launches == m2.launches && m3.uploads == m2.uploads && m3.memsets == m2.memsets,
            "an output whose rows overlap is refused before any driver call: " + message);
      std::free(mem);
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }

  // 9. (Last: it breaks the pool stream it lands on.) In a burst of async launches on the pool a
  // launcher thread makes the driver calls, so a submission returns before its launch is made; a
  // launch the driver rejects there is reported, naming the kernel, by a wait for it and by later
  // work on its stream.
  try {
    Tensor<float, 1> a({4096}), b({4096});
    auto step = [&](int i) {
      return i % 2 == 0 ? inc.launch_async(o, a.partition<1024>(), b) : inc.launch_async(o, b.partition<1024>(), a);
    };
    hold_others(1);  // the launcher's calls wait in the driver; this thread's do not
    int n = 0;
    bool queued = false;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (; n < 100000 && !queued && std::chrono::steady_clock::now() < give_up; ++n) {
      const long before = counts().launches;
      step(n).detach();
      queued = counts().launches == before;  // made by the launcher, which is held
    }
    if (!queued) {
      // Every launch was made inline: the launcher thread never got to poll between two of them
      // (a machine whose cores are busy with other work). Nothing is held; nothing to check.
      hold_others(0);
      std::printf("skipped the queued-launch failure: no launch of the burst was queued\n");
      throw Skipped{};
    }
    std::printf("ok: in a burst of async launches, one returns before its driver call is made\n");
    // The queued launch reaches the driver, where it waits (bounded, so a lost launch fails).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (hold_others(-1) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    check(hold_others(-1) == 1, "the queued launch reaches the driver");
    fail_launches(1);  // the held launch fails once let go
    hold_others(0);
    std::string next, later;
    try {
      step(n).wait();  // reported at its submission or at its wait, whichever comes after the failure
    } catch (const Error& e) {
      next = e.what();
    }
    try {
      step(n + 1).wait();
    } catch (const Error& e) {
      later = e.what();
    }
    check(next.find("kernel 'smoke_inc' could not be launched") != std::string::npos,
          "a failed queued launch is reported by the next work on its stream: " + next);
    check(later.find("kernel 'smoke_inc' could not be launched") != std::string::npos,
          "and by every later submission to its stream: " + later);
  } catch (const Skipped&) {
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  synchronize();
  Counts end = counts();
  check(end.errors == 0, "the fake driver saw no invalid call");
  std::printf("%s (%ld launches, %ld events recorded, %ld stream waits)\n", failures ? "FAILED" : "PASSED",
              end.launches, end.event_records, end.stream_waits);
  return failures ? 1 : 0;
}
