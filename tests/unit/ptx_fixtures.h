// ptx_fixtures.h: a hand-written PTX kernel shared by the nvJitLink and CUDA driver tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fixtures {

// The value store_const writes.
inline constexpr std::uint32_t kStoredValue = 0x7E55E7A;

// `.entry store_const(u64 p)` storing kStoredValue to the u32 *p, for a PTX version and target.
inline std::string store_const_ptx(std::string_view version = "9.0", std::string_view target = "sm_90") {
  return std::string(".version ") + std::string(version) + "\n.target " + std::string(target) +
         R"(
.address_size 64

.visible .entry store_const(
	.param .u64 store_const_param_0
)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [store_const_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, 132472442;
	st.global.u32 	[%rd2], %r1;
	ret;
}
)";
}

}  // namespace fixtures
