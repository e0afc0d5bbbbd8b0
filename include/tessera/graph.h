// graph.h: capture a sequence of launches once, replay it many times.
//
//   tessera::Scalar<int32_t> pos(0);
//   tessera::Graph g;                          // for default_target(), or Graph(Target::cpu)
//   {
//     auto recording = g.capture();            // launches on this thread are recorded, not run
//     step.launch(h.partition<128>(), x, pos);
//     head.launch(y.partition<128>(), h);
//   }
//   for (int t = 0; t < n; ++t) {
//     pos.set(t);                              // read at every replay: no re-capture
//     g.replay();                              // or auto done = g.replay_async();
//   }
//   g.rebind(x, x2);                           // same shape and strides: no re-capture
//   g.rebind(0, 1, x3);                        // the same, by launch and parameter
//
// A replay is one piece of work under the rules of launch.h: it reads every tensor the recorded
// launches read and writes every tensor they write, so it is ordered after the work in flight on
// them, and host access and later launches wait for it. Inside, the launches keep their recorded
// order wherever they share a tensor (independent ones may overlap on a GPU). On a GPU the graph
// is a CUDA graph of kernel nodes built at the first replay; changed scalars and rebound tensors
// patch the nodes' parameters (cuGraphExecKernelNodeSetParams). On the CPU target a replay runs
// the recorded launches in order.
//
// The graph does not keep its tensors alive: a replay after a bound tensor was destroyed throws
// tessera::Error naming the kernel, the launch and the parameter; g.rebind(launch, parameter, t)
// binds a live tensor there. A bound tensor that was moved to another Tensor handle stays bound:
// the binding follows the memory, not the variable.
#pragma once

#include <cstddef>
#include <memory>

#include "tessera/kernel.h"
#include "tessera/launch.h"
#include "tessera/tensor.h"

namespace tessera {

namespace detail {
class GraphImpl;
// Rebinds every use of `bound` to `replacement` (shape, strides, storage offset and dtype
// checked). libtessera.
void rebind(GraphImpl& g, const std::shared_ptr<Storage>& bound, const std::shared_ptr<Storage>& replacement,
            DType dtype, int rank, const int64_t* shape, const int64_t* strides, int64_t bound_offset,
            int64_t replacement_offset);
// The same for the tensor bound to parameter `parameter` of launch `launch`, which may no longer
// exist. libtessera.
void rebind_parameter(GraphImpl& g, std::size_t launch, std::size_t parameter,
                      const std::shared_ptr<Storage>& replacement, DType dtype, int rank, const int64_t* shape,
                      const int64_t* strides, int64_t replacement_offset);
// Moves parameter `parameter` of launch `launch` to `offset` of the storage it is bound to
// (`storage`, a view's shape and strides unchanged). libtessera.
void move_view(GraphImpl& g, std::size_t launch, std::size_t parameter, const std::shared_ptr<Storage>& storage,
               DType dtype, int rank, const int64_t* shape, const int64_t* strides, int64_t offset);
}  // namespace detail

class Graph {
 public:
  explicit Graph(Target target = default_target());
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  // Records the launches made on this thread while the returned object lives (or until end()),
  // instead of running them: launch() returns at once, launch_async() returns a ready handle.
  // Tensors and Scalars are bound by identity, numbers by value. A graph is captured once.
  class Capture {
   public:
    Capture(Capture&&) noexcept;
    Capture& operator=(Capture&&) = delete;
    ~Capture();
    void end();

   private:
    friend class Graph;
    explicit Capture(std::shared_ptr<detail::GraphImpl> g);
    std::shared_ptr<detail::GraphImpl> g_;
  };
  [[nodiscard]] Capture capture();

  Target target() const;
  // The number of recorded launches.
  std::size_t size() const;

  // Runs the recorded launches and waits for them.
  void replay(const LaunchOptions& options = {});
  // Submits a replay and returns at once (options.target must be empty or the graph's target).
  LaunchHandle<> replay_async(const LaunchOptions& options = {});

  // Binds `replacement` wherever `bound` is bound, for the following replays. They must have the
  // same shape, strides and (for views) storage offset; a tensor written by the graph must stay
  // distinct from the other tensors of the same launch.
  template <class T, int Rank>
  void rebind(const Tensor<T, Rank>& bound, Tensor<T, Rank>& replacement) {
    detail::rebind(live("rebind"), bound.storage(), replacement.storage(), dtype_v<T>, Rank, replacement.shape().data(),
                   replacement.strides().data(), bound.storage_offset(), replacement.storage_offset());
  }
  // The same for the tensor bound to parameter `parameter` of launch `launch` (both counted from
  // 0, launches in capture order), wherever it is bound: how to replace a tensor that no longer
  // exists, which a replay names by launch and parameter.
  template <class T, int Rank>
  void rebind(std::size_t launch, std::size_t parameter, Tensor<T, Rank>& replacement) {
    detail::rebind_parameter(live("rebind"), launch, parameter, replacement.storage(), dtype_v<T>, Rank,
                             replacement.shape().data(), replacement.strides().data(), replacement.storage_offset());
  }

  // Moves parameter `parameter` of launch `launch` to `view`: another view of the storage bound
  // there, with the same shape and strides at another offset (the next row of a KV cache). Only
  // that parameter moves; the storage's other uses stay. Throws tessera::Error if the view is of
  // another storage, shape or strides, if the launch's kernel was compiled for static shapes or
  // for 16-byte alignment that the new offset breaks, or if an output would then overlap another
  // parameter of the launch.
  template <class T, int Rank>
  void move_view(std::size_t launch, std::size_t parameter, Tensor<T, Rank>& view) {
    detail::move_view(live("move_view"), launch, parameter, view.storage(), dtype_v<T>, Rank, view.shape().data(),
                      view.strides().data(), view.storage_offset());
  }

 private:
  // The graph's state; throws tessera::Error naming `operation` on a moved-from Graph.
  detail::GraphImpl& live(const char* operation) const;
  std::shared_ptr<detail::GraphImpl> impl_;
};

}  // namespace tessera
