// RM errors: what the emulated driver answers for bad input and what the wrappers' messages say.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "nv_bringup.h"

namespace doorbell::nv_driver_test {
namespace {

template <class E = NvStatusError, class F>
E error_of(F&& call) {
  try {
    call();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return E("nothing", 0);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class NvRmErrorsOnMock : public ::testing::Test {
 protected:
  void SetUp() override {
    nv.open_driver();
    nv.device();
  }
  NvBringUp nv;
};

TEST_F(NvRmErrorsOnMock, UnknownClassIsInvalidClassAndTheMessageNamesClassAndParent) {
  const NvStatusError e = error_of([&] { nv.rm.alloc(nv.nvdevice, 0x1234); });
  EXPECT_EQ(e.status(), NV_ERR_INVALID_CLASS);
  const std::string message = e.what();
  EXPECT_TRUE(has(message, "RM_ALLOC of class 0x1234")) << message;
  EXPECT_TRUE(has(message, "under handle " + hex(nv.nvdevice))) << message;
  EXPECT_TRUE(has(message, "NV_ERR_INVALID_CLASS (0x22)")) << message;
}

TEST_F(NvRmErrorsOnMock, AmpereComputeClassIsNotOfferedByGh100) {
  nv.channels();
  EXPECT_EQ(error_of([&] { nv.rm.alloc(nv.compute_channel, 0xc7c0); }).status(), NV_ERR_INVALID_CLASS);
}

TEST_F(NvRmErrorsOnMock, ControlOnAnUnknownHandleNamesTheHandle) {
  const NvStatusError e = error_of([&] { nv.rm.work_submit_token(0xdead0001); });
  EXPECT_EQ(e.status(), NV_ERR_OBJECT_NOT_FOUND);
  EXPECT_TRUE(has(e.what(), "RM_CONTROL 0xc36f0108 on handle 0xdead0001")) << e.what();
  EXPECT_TRUE(has(e.what(), "NV_ERR_OBJECT_NOT_FOUND (0x57)")) << e.what();
}

TEST_F(NvRmErrorsOnMock, FreeOfAnUnknownHandleFails) {
  const NvStatusError e = error_of([&] { nv.rm.free(0xdead0002); });
  EXPECT_EQ(e.status(), NV_ERR_OBJECT_NOT_FOUND);
  EXPECT_TRUE(has(e.what(), "RM_FREE of handle 0xdead0002")) << e.what();
}

TEST_F(NvRmErrorsOnMock, MissingParentIsNotFoundAndWrongParentIsInvalidObjectParent) {
  NV2080_ALLOC_PARAMETERS params{};
  const NvStatusError missing = error_of([&] { nv.rm.alloc(0xdead0003, NV20_SUBDEVICE_0, params); });
  EXPECT_EQ(missing.status(), NV_ERR_OBJECT_NOT_FOUND);
  EXPECT_TRUE(has(missing.what(), "under handle 0xdead0003")) << missing.what();
  EXPECT_EQ(error_of([&] { nv.rm.alloc(nv.root, NV20_SUBDEVICE_0, params); }).status(), NV_ERR_INVALID_OBJECT_PARENT);
  EXPECT_EQ(error_of([&] { nv.rm.alloc(nv.nvdevice, HOPPER_USERMODE_A); }).status(), NV_ERR_INVALID_OBJECT_PARENT);
}

TEST_F(NvRmErrorsOnMock, HandleAlreadyInUseIsInsertDuplicateName) {
  EXPECT_EQ(error_of([&] { nv.rm.alloc(nv.subdevice, HOPPER_USERMODE_A, nv.usermode); }).status(),
            NV_ERR_INSERT_DUPLICATE_NAME);
}

TEST_F(NvRmErrorsOnMock, UnknownClientIsInvalidClient) {
  NvRm stranger(nv.driver, nv.ctl.get());  // no root client: hRoot 0
  EXPECT_EQ(error_of([&] { stranger.alloc(nv.nvdevice, NV20_SUBDEVICE_0); }).status(), NV_ERR_INVALID_CLIENT);
}

TEST_F(NvRmErrorsOnMock, FreeingTheChannelGroupFreesItsChannelsEngineObjectsAndContextShare) {
  nv.channels();
  const NvHandle compute_object = nv.driver.channel_by_token(nv.compute_token)->engine_objects.at(0);
  nv.rm.free(nv.channel_group, nv.nvdevice);
  for (const NvHandle gone : {nv.channel_group, nv.ctxshare, nv.compute_channel, nv.copy_channel, compute_object}) {
    EXPECT_FALSE(nv.driver.rm_has_object(nv.root, gone)) << hex(gone);
  }
  EXPECT_TRUE(nv.driver.rm_has_object(nv.root, nv.gpfifo_area.memory));
  EXPECT_TRUE(nv.driver.channels().empty());
  EXPECT_EQ(error_of([&] { nv.rm.work_submit_token(nv.compute_channel); }).status(), NV_ERR_OBJECT_NOT_FOUND);
}

TEST_F(NvRmErrorsOnMock, FreeingTheRootClientFreesEverything) {
  nv.channels();
  nv.rm.free(nv.root);
  EXPECT_EQ(nv.driver.rm_object_count(), 0u);
  EXPECT_EQ(nv.rm.client(), 0u);
}

TEST_F(NvRmErrorsOnMock, VaspaceParamsIn570LayoutAreRejectedNotMisread) {
  NV_VASPACE_ALLOCATION_PARAMETERS params{};
  const NvStatusError e = error_of([&] { nv.rm.alloc(nv.nvdevice, FERMI_VASPACE_A, &params, 48); });
  EXPECT_EQ(e.status(), NV_ERR_INVALID_PARAM_STRUCT);
}

TEST_F(NvRmErrorsOnMock, ControlWithThe570ParamsSizeIsAnInvalidArgument) {
  nv.channels();
  NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS params{1, 0, 0};
  EXPECT_EQ(error_of([&] { nv.rm.control(nv.channel_group, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &params, 2); }).status(),
            NV_ERR_INVALID_ARGUMENT);
}

TEST_F(NvRmErrorsOnMock, UnknownControlCommandIsNotSupported) {
  std::uint32_t params = 0;
  EXPECT_EQ(error_of([&] { nv.rm.control(nv.subdevice, 0x2080ffff, &params, 4); }).status(), NV_ERR_NOT_SUPPORTED);
}

TEST_F(NvRmErrorsOnMock, ControlOnTheWrongKindOfObjectIsNotSupported) {
  NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS params{};
  const NvStatusError e =
      error_of([&] { nv.rm.control(nv.nvdevice, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, params); });
  EXPECT_EQ(e.status(), NV_ERR_NOT_SUPPORTED);
}

TEST_F(NvRmErrorsOnMock, EscapeWithThe570SizeOfNvos46FailsInTheKernelWithEinval) {
  std::uint8_t args[64] = {};
  EXPECT_EQ(nv.driver.ioctl(nv.ctl.get(), 0xC0384657ul, args), -EINVAL);
}

TEST_F(NvRmErrorsOnMock, AllocMemoryOnTheCtlFdIsRefusedWithANamedError) {
  const NvIoctlError e = error_of<NvIoctlError>([&] {
    nv.rm.alloc_memory(nv.ctl.get(), nv.nvdevice, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, 0, 0x10000, 0xfff);
  });
  EXPECT_EQ(e.error(), EINVAL);
  EXPECT_TRUE(has(e.what(), "RM_ALLOC_MEMORY of class 0x71 (NV01_MEMORY_SYSTEM_OS_DESCRIPTOR)")) << e.what();
  EXPECT_TRUE(has(e.what(), "errno 22")) << e.what();
}

TEST_F(NvRmErrorsOnMock, SecondRegisterFdOnTheSameDeviceFdFails) {
  EXPECT_THROW(nv.rm.register_fd(nv.dev_fd.get()), NvIoctlError);
}

TEST_F(NvRmErrorsOnMock, ChannelWithANonPowerOfTwoRingIsRejected) {
  nv.channels();
  NV_CHANNEL_ALLOC_PARAMS params{};
  params.gpFifoOffset = nv.gpfifo_area.va;
  params.gpFifoEntries = 1000;
  params.hUserdMemory[0] = nv.gpfifo_area.memory;
  EXPECT_EQ(error_of([&] { nv.rm.alloc(nv.channel_group, HOPPER_CHANNEL_GPFIFO_A, params); }).status(),
            NV_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace doorbell::nv_driver_test
