// interop.h: tessera beside other GPU code (PyTorch extensions, cuBLAS, cuDNN) without copies.
//
//  - Foreign memory: Tensor<T, R>::from_device(ptr, shape, strides, release) wraps device memory
//    someone else allocated (tensor.h).
//  - Foreign streams: Stream::from_cuda(cu_stream) runs tessera launches on a stream you give
//    (launch.h): k.launch_async({.stream = torch_stream}, ...).
//  - Foreign work on tessera tensors: borrow_for_device(t, stream) hands the device address of t
//    to code that enqueues work on `stream` (e.g. a cuBLAS call), as an explicit borrow:
//
//      auto s = tessera::Stream::from_cuda(my_cublas_stream);
//      {
//        auto c = tessera::borrow_for_device(out, s);            // exclusive (Access::write)
//        auto a = tessera::borrow_for_device(std::as_const(x), s); // shared
//        cublasSgemm(handle, ..., static_cast<const float*>(a.device_ptr()), ...,
//                    static_cast<float*>(c.device_ptr()), ...);
//      }                                                           // end(): the borrows record an event on s
//      k.launch(y.partition<128>(), out);                          // ordered after the gemm
//
//    When borrow_for_device returns, `stream` is ordered after tessera's work on t and the device
//    copy is current. From end() (or destruction) on, tessera work and host access using t are
//    ordered after what was enqueued on `stream` until then. While the borrow is open, nothing can
//    be ordered after it yet, so a conflicting launch or host access throws tessera::Error: a
//    second exclusive borrow is refused. borrow_for_host is the same for host code (e.g. a CPU
//    library): it waits for tessera's work on t, and end() means the host code has finished.
#pragma once

#include <memory>

#include "tessera/errors.h"
#include "tessera/launch.h"
#include "tessera/tensor.h"

namespace tessera {

enum class Access { read, write };

namespace detail {
struct ForeignBorrowState;
// libtessera.
std::shared_ptr<ForeignBorrowState> begin_foreign_borrow(std::shared_ptr<Storage> storage, bool write, bool device,
                                                         const Stream& stream);
void end_foreign_borrow(ForeignBorrowState& state);
void* foreign_borrow_address(const ForeignBorrowState& state);
}  // namespace detail

class [[nodiscard]] ForeignBorrow {
 public:
  // Made by borrow_for_device / borrow_for_host.
  explicit ForeignBorrow(std::shared_ptr<detail::ForeignBorrowState> s) : state_(std::move(s)) {}
  ForeignBorrow(ForeignBorrow&&) noexcept = default;
  ForeignBorrow& operator=(ForeignBorrow&& other) noexcept {
    if (this != &other) {
      end_quietly();
      state_ = std::move(other.state_);
    }
    return *this;
  }
  ForeignBorrow(const ForeignBorrow&) = delete;
  ForeignBorrow& operator=(const ForeignBorrow&) = delete;
  ~ForeignBorrow() { end_quietly(); }

  // The device address (borrow_for_device) or host address (borrow_for_host) of the first element.
  void* device_ptr() const { return address(); }
  void* host_ptr() const { return address(); }
  // The foreign work has been enqueued on the borrow's stream (device) or has finished (host).
  void end() {
    if (state_) detail::end_foreign_borrow(*state_);
    state_.reset();
  }

 private:
  void* address() const {
    if (!state_) throw Error("tessera::ForeignBorrow: the borrow has ended (or was moved from)");
    return detail::foreign_borrow_address(*state_);
  }
  void end_quietly() noexcept {
    try {
      end();
    } catch (...) {
    }
  }
  std::shared_ptr<detail::ForeignBorrowState> state_;
};

// Lends `t` to GPU code that enqueues work on `stream` (a non-empty Stream, usually from_cuda).
template <class T, int R>
ForeignBorrow borrow_for_device(Tensor<T, R>& t, const Stream& stream, Access access = Access::write) {
  return ForeignBorrow(detail::begin_foreign_borrow(t.storage(), access == Access::write, true, stream));
}
template <class T, int R>
ForeignBorrow borrow_for_device(const Tensor<T, R>& t, const Stream& stream) {
  return ForeignBorrow(detail::begin_foreign_borrow(t.storage(), false, true, stream));
}
// Lends `t` to host code; waits for tessera's work on it first.
template <class T, int R>
ForeignBorrow borrow_for_host(Tensor<T, R>& t, Access access = Access::write) {
  return ForeignBorrow(detail::begin_foreign_borrow(t.storage(), access == Access::write, false, Stream()));
}
template <class T, int R>
ForeignBorrow borrow_for_host(const Tensor<T, R>& t) {
  return ForeignBorrow(detail::begin_foreign_borrow(t.storage(), false, false, Stream()));
}

}  // namespace tessera
