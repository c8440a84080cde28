// SPIR-V's opcodes and enumerants as data (one X-macro list per kind makes the enum, the names and the operand
// kinds), for the module builder (spirv_module.h), its printer and its assembler.
//
// Source: the SPIR-V 1.5 core grammar, KhronosGroup/SPIRV-Headers include/spirv/unified1/spirv.core.grammar.json
// (Debian package spirv-headers, /usr/include/spirv/unified1/; "instructions" and "operand_kinds"), and the
// GLSL.std.450 extended set, extinst.glsl.std.450.grammar.json beside it. Kept: the instruction classes a compute
// shader uses (no image, sampler, pipe or device-enqueue ops), and the enumerants of SPIR-V 1.5 and earlier (those
// whose "version" is at most 1.5; none that exists only as a vendor extension).
//
// Operand kinds, as the grammar's "operands" list, one token each, with the grammar's quantifier (? optional,
// * any number) appended: T IdResultType, R IdResult, I IdRef (also IdScope and IdMemorySemantics: ids of
// constants), L LiteralInteger, S LiteralString, C LiteralContextDependentNumber (one or two words, by the result
// type's width), X LiteralExtInstInteger, LI / IL / II the grammar's pairs, {Kind} an enumerant of that kind (a
// "ValueEnum", or a "BitEnum" mask), which may take parameters: each enumerant's own token string.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace doorbell::spirv {

#define DOORBELL_SPIRV_OPS(X) \
  X(Nop, 0, "") \
  X(Undef, 1, "T R") \
  X(SourceContinued, 2, "S") \
  X(Source, 3, "{SourceLanguage} L I? S?") \
  X(SourceExtension, 4, "S") \
  X(Name, 5, "I S") \
  X(MemberName, 6, "I L S") \
  X(String, 7, "R S") \
  X(Line, 8, "I L L") \
  X(Extension, 10, "S") \
  X(ExtInstImport, 11, "R S") \
  X(ExtInst, 12, "T R I X I*") \
  X(MemoryModel, 14, "{AddressingModel} {MemoryModel}") \
  X(EntryPoint, 15, "{ExecutionModel} I S I*") \
  X(ExecutionMode, 16, "I {ExecutionMode}") \
  X(Capability, 17, "{Capability}") \
  X(TypeVoid, 19, "R") \
  X(TypeBool, 20, "R") \
  X(TypeInt, 21, "R L L") \
  X(TypeFloat, 22, "R L") \
  X(TypeVector, 23, "R I L") \
  X(TypeMatrix, 24, "R I L") \
  X(TypeArray, 28, "R I I") \
  X(TypeRuntimeArray, 29, "R I") \
  X(TypeStruct, 30, "R I*") \
  X(TypePointer, 32, "R {StorageClass} I") \
  X(TypeFunction, 33, "R I I*") \
  X(ConstantTrue, 41, "T R") \
  X(ConstantFalse, 42, "T R") \
  X(Constant, 43, "T R C") \
  X(ConstantComposite, 44, "T R I*") \
  X(ConstantNull, 46, "T R") \
  X(SpecConstantTrue, 48, "T R") \
  X(SpecConstantFalse, 49, "T R") \
  X(SpecConstant, 50, "T R C") \
  X(SpecConstantComposite, 51, "T R I*") \
  X(SpecConstantOp, 52, "T R L") \
  X(Function, 54, "T R {FunctionControl} I") \
  X(FunctionParameter, 55, "T R") \
  X(FunctionEnd, 56, "") \
  X(FunctionCall, 57, "T R I I*") \
  X(Variable, 59, "T R {StorageClass} I?") \
  X(ImageTexelPointer, 60, "T R I I I") \
  X(Load, 61, "T R I {MemoryAccess}?") \
  X(Store, 62, "I I {MemoryAccess}?") \
  X(CopyMemory, 63, "I I {MemoryAccess}? {MemoryAccess}?") \
  X(CopyMemorySized, 64, "I I I {MemoryAccess}? {MemoryAccess}?") \
  X(AccessChain, 65, "T R I I*") \
  X(InBoundsAccessChain, 66, "T R I I*") \
  X(PtrAccessChain, 67, "T R I I I*") \
  X(ArrayLength, 68, "T R I L") \
  X(GenericPtrMemSemantics, 69, "T R I") \
  X(InBoundsPtrAccessChain, 70, "T R I I I*") \
  X(Decorate, 71, "I {Decoration}") \
  X(MemberDecorate, 72, "I L {Decoration}") \
  X(DecorationGroup, 73, "R") \
  X(GroupDecorate, 74, "I I*") \
  X(GroupMemberDecorate, 75, "I IL*") \
  X(VectorExtractDynamic, 77, "T R I I") \
  X(VectorInsertDynamic, 78, "T R I I I") \
  X(VectorShuffle, 79, "T R I I L*") \
  X(CompositeConstruct, 80, "T R I*") \
  X(CompositeExtract, 81, "T R I L*") \
  X(CompositeInsert, 82, "T R I I L*") \
  X(CopyObject, 83, "T R I") \
  X(Transpose, 84, "T R I") \
  X(ConvertFToU, 109, "T R I") \
  X(ConvertFToS, 110, "T R I") \
  X(ConvertSToF, 111, "T R I") \
  X(ConvertUToF, 112, "T R I") \
  X(UConvert, 113, "T R I") \
  X(SConvert, 114, "T R I") \
  X(FConvert, 115, "T R I") \
  X(QuantizeToF16, 116, "T R I") \
  X(ConvertPtrToU, 117, "T R I") \
  X(SatConvertSToU, 118, "T R I") \
  X(SatConvertUToS, 119, "T R I") \
  X(ConvertUToPtr, 120, "T R I") \
  X(PtrCastToGeneric, 121, "T R I") \
  X(GenericCastToPtr, 122, "T R I") \
  X(GenericCastToPtrExplicit, 123, "T R I {StorageClass}") \
  X(Bitcast, 124, "T R I") \
  X(SNegate, 126, "T R I") \
  X(FNegate, 127, "T R I") \
  X(IAdd, 128, "T R I I") \
  X(FAdd, 129, "T R I I") \
  X(ISub, 130, "T R I I") \
  X(FSub, 131, "T R I I") \
  X(IMul, 132, "T R I I") \
  X(FMul, 133, "T R I I") \
  X(UDiv, 134, "T R I I") \
  X(SDiv, 135, "T R I I") \
  X(FDiv, 136, "T R I I") \
  X(UMod, 137, "T R I I") \
  X(SRem, 138, "T R I I") \
  X(SMod, 139, "T R I I") \
  X(FRem, 140, "T R I I") \
  X(FMod, 141, "T R I I") \
  X(VectorTimesScalar, 142, "T R I I") \
  X(MatrixTimesScalar, 143, "T R I I") \
  X(VectorTimesMatrix, 144, "T R I I") \
  X(MatrixTimesVector, 145, "T R I I") \
  X(MatrixTimesMatrix, 146, "T R I I") \
  X(OuterProduct, 147, "T R I I") \
  X(Dot, 148, "T R I I") \
  X(IAddCarry, 149, "T R I I") \
  X(ISubBorrow, 150, "T R I I") \
  X(UMulExtended, 151, "T R I I") \
  X(SMulExtended, 152, "T R I I") \
  X(Any, 154, "T R I") \
  X(All, 155, "T R I") \
  X(IsNan, 156, "T R I") \
  X(IsInf, 157, "T R I") \
  X(IsFinite, 158, "T R I") \
  X(IsNormal, 159, "T R I") \
  X(SignBitSet, 160, "T R I") \
  X(LessOrGreater, 161, "T R I I") \
  X(Ordered, 162, "T R I I") \
  X(Unordered, 163, "T R I I") \
  X(LogicalEqual, 164, "T R I I") \
  X(LogicalNotEqual, 165, "T R I I") \
  X(LogicalOr, 166, "T R I I") \
  X(LogicalAnd, 167, "T R I I") \
  X(LogicalNot, 168, "T R I") \
  X(Select, 169, "T R I I I") \
  X(IEqual, 170, "T R I I") \
  X(INotEqual, 171, "T R I I") \
  X(UGreaterThan, 172, "T R I I") \
  X(SGreaterThan, 173, "T R I I") \
  X(UGreaterThanEqual, 174, "T R I I") \
  X(SGreaterThanEqual, 175, "T R I I") \
  X(ULessThan, 176, "T R I I") \
  X(SLessThan, 177, "T R I I") \
  X(ULessThanEqual, 178, "T R I I") \
  X(SLessThanEqual, 179, "T R I I") \
  X(FOrdEqual, 180, "T R I I") \
  X(FUnordEqual, 181, "T R I I") \
  X(FOrdNotEqual, 182, "T R I I") \
  X(FUnordNotEqual, 183, "T R I I") \
  X(FOrdLessThan, 184, "T R I I") \
  X(FUnordLessThan, 185, "T R I I") \
  X(FOrdGreaterThan, 186, "T R I I") \
  X(FUnordGreaterThan, 187, "T R I I") \
  X(FOrdLessThanEqual, 188, "T R I I") \
  X(FUnordLessThanEqual, 189, "T R I I") \
  X(FOrdGreaterThanEqual, 190, "T R I I") \
  X(FUnordGreaterThanEqual, 191, "T R I I") \
  X(ShiftRightLogical, 194, "T R I I") \
  X(ShiftRightArithmetic, 195, "T R I I") \
  X(ShiftLeftLogical, 196, "T R I I") \
  X(BitwiseOr, 197, "T R I I") \
  X(BitwiseXor, 198, "T R I I") \
  X(BitwiseAnd, 199, "T R I I") \
  X(Not, 200, "T R I") \
  X(BitFieldInsert, 201, "T R I I I I") \
  X(BitFieldSExtract, 202, "T R I I I") \
  X(BitFieldUExtract, 203, "T R I I I") \
  X(BitReverse, 204, "T R I") \
  X(BitCount, 205, "T R I") \
  X(ControlBarrier, 224, "I I I") \
  X(MemoryBarrier, 225, "I I") \
  X(AtomicLoad, 227, "T R I I I") \
  X(AtomicStore, 228, "I I I I") \
  X(AtomicExchange, 229, "T R I I I I") \
  X(AtomicCompareExchange, 230, "T R I I I I I I") \
  X(AtomicCompareExchangeWeak, 231, "T R I I I I I I") \
  X(AtomicIIncrement, 232, "T R I I I") \
  X(AtomicIDecrement, 233, "T R I I I") \
  X(AtomicIAdd, 234, "T R I I I I") \
  X(AtomicISub, 235, "T R I I I I") \
  X(AtomicSMin, 236, "T R I I I I") \
  X(AtomicUMin, 237, "T R I I I I") \
  X(AtomicSMax, 238, "T R I I I I") \
  X(AtomicUMax, 239, "T R I I I I") \
  X(AtomicAnd, 240, "T R I I I I") \
  X(AtomicOr, 241, "T R I I I I") \
  X(AtomicXor, 242, "T R I I I I") \
  X(Phi, 245, "T R II*") \
  X(LoopMerge, 246, "I I {LoopControl}") \
  X(SelectionMerge, 247, "I {SelectionControl}") \
  X(Label, 248, "R") \
  X(Branch, 249, "I") \
  X(BranchConditional, 250, "I I I L*") \
  X(Switch, 251, "I I LI*") \
  X(Kill, 252, "") \
  X(Return, 253, "") \
  X(ReturnValue, 254, "I") \
  X(Unreachable, 255, "") \
  X(LifetimeStart, 256, "I L") \
  X(LifetimeStop, 257, "I L") \
  X(NoLine, 317, "") \
  X(AtomicFlagTestAndSet, 318, "T R I I I") \
  X(AtomicFlagClear, 319, "I I I") \
  X(SizeOf, 321, "T R I") \
  X(NamedBarrierInitialize, 328, "T R I") \
  X(MemoryNamedBarrier, 329, "I I I") \
  X(ModuleProcessed, 330, "S") \
  X(ExecutionModeId, 331, "I {ExecutionMode}") \
  X(DecorateId, 332, "I {Decoration}") \
  X(GroupNonUniformElect, 333, "T R I") \
  X(GroupNonUniformAll, 334, "T R I I") \
  X(GroupNonUniformAny, 335, "T R I I") \
  X(GroupNonUniformAllEqual, 336, "T R I I") \
  X(GroupNonUniformBroadcast, 337, "T R I I I") \
  X(GroupNonUniformBroadcastFirst, 338, "T R I I") \
  X(GroupNonUniformBallot, 339, "T R I I") \
  X(GroupNonUniformInverseBallot, 340, "T R I I") \
  X(GroupNonUniformBallotBitExtract, 341, "T R I I I") \
  X(GroupNonUniformBallotBitCount, 342, "T R I {GroupOperation} I") \
  X(GroupNonUniformBallotFindLSB, 343, "T R I I") \
  X(GroupNonUniformBallotFindMSB, 344, "T R I I") \
  X(GroupNonUniformShuffle, 345, "T R I I I") \
  X(GroupNonUniformShuffleXor, 346, "T R I I I") \
  X(GroupNonUniformShuffleUp, 347, "T R I I I") \
  X(GroupNonUniformShuffleDown, 348, "T R I I I") \
  X(GroupNonUniformIAdd, 349, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformFAdd, 350, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformIMul, 351, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformFMul, 352, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformSMin, 353, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformUMin, 354, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformFMin, 355, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformSMax, 356, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformUMax, 357, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformFMax, 358, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformBitwiseAnd, 359, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformBitwiseOr, 360, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformBitwiseXor, 361, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformLogicalAnd, 362, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformLogicalOr, 363, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformLogicalXor, 364, "T R I {GroupOperation} I I?") \
  X(GroupNonUniformQuadBroadcast, 365, "T R I I I") \
  X(GroupNonUniformQuadSwap, 366, "T R I I I") \
  X(CopyLogical, 400, "T R I") \
  X(PtrEqual, 401, "T R I I") \
  X(PtrNotEqual, 402, "T R I I") \
  X(PtrDiff, 403, "T R I I") \
  X(DecorateString, 5632, "I {Decoration}") \
  X(DecorateStringGOOGLE, 5632, "I {Decoration}") \
  X(MemberDecorateString, 5633, "I L {Decoration}") \
  X(MemberDecorateStringGOOGLE, 5633, "I L {Decoration}")

// ValueEnum
#define DOORBELL_SPIRV_CAPABILITY(X) \
  X(Matrix, 0x0, "") \
  X(Shader, 0x1, "") \
  X(Geometry, 0x2, "") \
  X(Tessellation, 0x3, "") \
  X(Addresses, 0x4, "") \
  X(Linkage, 0x5, "") \
  X(Kernel, 0x6, "") \
  X(Vector16, 0x7, "") \
  X(Float16Buffer, 0x8, "") \
  X(Float16, 0x9, "") \
  X(Float64, 0xa, "") \
  X(Int64, 0xb, "") \
  X(Int64Atomics, 0xc, "") \
  X(ImageBasic, 0xd, "") \
  X(ImageReadWrite, 0xe, "") \
  X(ImageMipmap, 0xf, "") \
  X(Pipes, 0x11, "") \
  X(DeviceEnqueue, 0x13, "") \
  X(LiteralSampler, 0x14, "") \
  X(AtomicStorage, 0x15, "") \
  X(Int16, 0x16, "") \
  X(TessellationPointSize, 0x17, "") \
  X(GeometryPointSize, 0x18, "") \
  X(ImageGatherExtended, 0x19, "") \
  X(StorageImageMultisample, 0x1b, "") \
  X(UniformBufferArrayDynamicIndexing, 0x1c, "") \
  X(SampledImageArrayDynamicIndexing, 0x1d, "") \
  X(StorageBufferArrayDynamicIndexing, 0x1e, "") \
  X(StorageImageArrayDynamicIndexing, 0x1f, "") \
  X(ClipDistance, 0x20, "") \
  X(CullDistance, 0x21, "") \
  X(ImageCubeArray, 0x22, "") \
  X(SampleRateShading, 0x23, "") \
  X(ImageRect, 0x24, "") \
  X(SampledRect, 0x25, "") \
  X(GenericPointer, 0x26, "") \
  X(Int8, 0x27, "") \
  X(InputAttachment, 0x28, "") \
  X(SparseResidency, 0x29, "") \
  X(MinLod, 0x2a, "") \
  X(Sampled1D, 0x2b, "") \
  X(Image1D, 0x2c, "") \
  X(SampledCubeArray, 0x2d, "") \
  X(SampledBuffer, 0x2e, "") \
  X(ImageBuffer, 0x2f, "") \
  X(ImageMSArray, 0x30, "") \
  X(StorageImageExtendedFormats, 0x31, "") \
  X(ImageQuery, 0x32, "") \
  X(DerivativeControl, 0x33, "") \
  X(InterpolationFunction, 0x34, "") \
  X(TransformFeedback, 0x35, "") \
  X(GeometryStreams, 0x36, "") \
  X(StorageImageReadWithoutFormat, 0x37, "") \
  X(StorageImageWriteWithoutFormat, 0x38, "") \
  X(MultiViewport, 0x39, "") \
  X(SubgroupDispatch, 0x3a, "") \
  X(NamedBarrier, 0x3b, "") \
  X(PipeStorage, 0x3c, "") \
  X(GroupNonUniform, 0x3d, "") \
  X(GroupNonUniformVote, 0x3e, "") \
  X(GroupNonUniformArithmetic, 0x3f, "") \
  X(GroupNonUniformBallot, 0x40, "") \
  X(GroupNonUniformShuffle, 0x41, "") \
  X(GroupNonUniformShuffleRelative, 0x42, "") \
  X(GroupNonUniformClustered, 0x43, "") \
  X(GroupNonUniformQuad, 0x44, "") \
  X(ShaderLayer, 0x45, "") \
  X(ShaderViewportIndex, 0x46, "") \
  X(DrawParameters, 0x114b, "") \
  X(StorageBuffer16BitAccess, 0x1151, "") \
  X(StorageUniformBufferBlock16, 0x1151, "") \
  X(UniformAndStorageBuffer16BitAccess, 0x1152, "") \
  X(StorageUniform16, 0x1152, "") \
  X(StoragePushConstant16, 0x1153, "") \
  X(StorageInputOutput16, 0x1154, "") \
  X(DeviceGroup, 0x1155, "") \
  X(MultiView, 0x1157, "") \
  X(VariablePointersStorageBuffer, 0x1159, "") \
  X(VariablePointers, 0x115a, "") \
  X(StorageBuffer8BitAccess, 0x1160, "") \
  X(UniformAndStorageBuffer8BitAccess, 0x1161, "") \
  X(StoragePushConstant8, 0x1162, "") \
  X(DenormPreserve, 0x1170, "") \
  X(DenormFlushToZero, 0x1171, "") \
  X(SignedZeroInfNanPreserve, 0x1172, "") \
  X(RoundingModeRTE, 0x1173, "") \
  X(RoundingModeRTZ, 0x1174, "") \
  X(ShaderNonUniform, 0x14b5, "") \
  X(ShaderNonUniformEXT, 0x14b5, "") \
  X(RuntimeDescriptorArray, 0x14b6, "") \
  X(RuntimeDescriptorArrayEXT, 0x14b6, "") \
  X(InputAttachmentArrayDynamicIndexing, 0x14b7, "") \
  X(InputAttachmentArrayDynamicIndexingEXT, 0x14b7, "") \
  X(UniformTexelBufferArrayDynamicIndexing, 0x14b8, "") \
  X(UniformTexelBufferArrayDynamicIndexingEXT, 0x14b8, "") \
  X(StorageTexelBufferArrayDynamicIndexing, 0x14b9, "") \
  X(StorageTexelBufferArrayDynamicIndexingEXT, 0x14b9, "") \
  X(UniformBufferArrayNonUniformIndexing, 0x14ba, "") \
  X(UniformBufferArrayNonUniformIndexingEXT, 0x14ba, "") \
  X(SampledImageArrayNonUniformIndexing, 0x14bb, "") \
  X(SampledImageArrayNonUniformIndexingEXT, 0x14bb, "") \
  X(StorageBufferArrayNonUniformIndexing, 0x14bc, "") \
  X(StorageBufferArrayNonUniformIndexingEXT, 0x14bc, "") \
  X(StorageImageArrayNonUniformIndexing, 0x14bd, "") \
  X(StorageImageArrayNonUniformIndexingEXT, 0x14bd, "") \
  X(InputAttachmentArrayNonUniformIndexing, 0x14be, "") \
  X(InputAttachmentArrayNonUniformIndexingEXT, 0x14be, "") \
  X(UniformTexelBufferArrayNonUniformIndexing, 0x14bf, "") \
  X(UniformTexelBufferArrayNonUniformIndexingEXT, 0x14bf, "") \
  X(StorageTexelBufferArrayNonUniformIndexing, 0x14c0, "") \
  X(StorageTexelBufferArrayNonUniformIndexingEXT, 0x14c0, "") \
  X(VulkanMemoryModel, 0x14e1, "") \
  X(VulkanMemoryModelKHR, 0x14e1, "") \
  X(VulkanMemoryModelDeviceScope, 0x14e2, "") \
  X(VulkanMemoryModelDeviceScopeKHR, 0x14e2, "") \
  X(PhysicalStorageBufferAddresses, 0x14e3, "") \
  X(PhysicalStorageBufferAddressesEXT, 0x14e3, "")

// ValueEnum
#define DOORBELL_SPIRV_ADDRESSING_MODEL(X) \
  X(Logical, 0x0, "") \
  X(Physical32, 0x1, "") \
  X(Physical64, 0x2, "") \
  X(PhysicalStorageBuffer64, 0x14e4, "") \
  X(PhysicalStorageBuffer64EXT, 0x14e4, "")

// ValueEnum
#define DOORBELL_SPIRV_MEMORY_MODEL(X) \
  X(Simple, 0x0, "") \
  X(GLSL450, 0x1, "") \
  X(OpenCL, 0x2, "") \
  X(Vulkan, 0x3, "") \
  X(VulkanKHR, 0x3, "")

// ValueEnum
#define DOORBELL_SPIRV_EXECUTION_MODEL(X) \
  X(Vertex, 0x0, "") \
  X(TessellationControl, 0x1, "") \
  X(TessellationEvaluation, 0x2, "") \
  X(Geometry, 0x3, "") \
  X(Fragment, 0x4, "") \
  X(GLCompute, 0x5, "") \
  X(Kernel, 0x6, "")

// ValueEnum
#define DOORBELL_SPIRV_EXECUTION_MODE(X) \
  X(Invocations, 0x0, "L") \
  X(SpacingEqual, 0x1, "") \
  X(SpacingFractionalEven, 0x2, "") \
  X(SpacingFractionalOdd, 0x3, "") \
  X(VertexOrderCw, 0x4, "") \
  X(VertexOrderCcw, 0x5, "") \
  X(PixelCenterInteger, 0x6, "") \
  X(OriginUpperLeft, 0x7, "") \
  X(OriginLowerLeft, 0x8, "") \
  X(EarlyFragmentTests, 0x9, "") \
  X(PointMode, 0xa, "") \
  X(Xfb, 0xb, "") \
  X(DepthReplacing, 0xc, "") \
  X(DepthGreater, 0xe, "") \
  X(DepthLess, 0xf, "") \
  X(DepthUnchanged, 0x10, "") \
  X(LocalSize, 0x11, "L L L") \
  X(LocalSizeHint, 0x12, "L L L") \
  X(InputPoints, 0x13, "") \
  X(InputLines, 0x14, "") \
  X(InputLinesAdjacency, 0x15, "") \
  X(Triangles, 0x16, "") \
  X(InputTrianglesAdjacency, 0x17, "") \
  X(Quads, 0x18, "") \
  X(Isolines, 0x19, "") \
  X(OutputVertices, 0x1a, "L") \
  X(OutputPoints, 0x1b, "") \
  X(OutputLineStrip, 0x1c, "") \
  X(OutputTriangleStrip, 0x1d, "") \
  X(VecTypeHint, 0x1e, "L") \
  X(ContractionOff, 0x1f, "") \
  X(Initializer, 0x21, "") \
  X(Finalizer, 0x22, "") \
  X(SubgroupSize, 0x23, "L") \
  X(SubgroupsPerWorkgroup, 0x24, "L") \
  X(SubgroupsPerWorkgroupId, 0x25, "I") \
  X(LocalSizeId, 0x26, "I I I") \
  X(LocalSizeHintId, 0x27, "I I I") \
  X(DenormPreserve, 0x116b, "L") \
  X(DenormFlushToZero, 0x116c, "L") \
  X(SignedZeroInfNanPreserve, 0x116d, "L") \
  X(RoundingModeRTE, 0x116e, "L") \
  X(RoundingModeRTZ, 0x116f, "L")

// ValueEnum
#define DOORBELL_SPIRV_STORAGE_CLASS(X) \
  X(UniformConstant, 0x0, "") \
  X(Input, 0x1, "") \
  X(Uniform, 0x2, "") \
  X(Output, 0x3, "") \
  X(Workgroup, 0x4, "") \
  X(CrossWorkgroup, 0x5, "") \
  X(Private, 0x6, "") \
  X(Function, 0x7, "") \
  X(Generic, 0x8, "") \
  X(PushConstant, 0x9, "") \
  X(AtomicCounter, 0xa, "") \
  X(Image, 0xb, "") \
  X(StorageBuffer, 0xc, "") \
  X(PhysicalStorageBuffer, 0x14e5, "") \
  X(PhysicalStorageBufferEXT, 0x14e5, "") \
  X(TaskPayloadWorkgroupEXT, 0x151a, "")

// ValueEnum
#define DOORBELL_SPIRV_DECORATION(X) \
  X(RelaxedPrecision, 0x0, "") \
  X(SpecId, 0x1, "L") \
  X(Block, 0x2, "") \
  X(BufferBlock, 0x3, "") \
  X(RowMajor, 0x4, "") \
  X(ColMajor, 0x5, "") \
  X(ArrayStride, 0x6, "L") \
  X(MatrixStride, 0x7, "L") \
  X(GLSLShared, 0x8, "") \
  X(GLSLPacked, 0x9, "") \
  X(CPacked, 0xa, "") \
  X(BuiltIn, 0xb, "{BuiltIn}") \
  X(NoPerspective, 0xd, "") \
  X(Flat, 0xe, "") \
  X(Patch, 0xf, "") \
  X(Centroid, 0x10, "") \
  X(Sample, 0x11, "") \
  X(Invariant, 0x12, "") \
  X(Restrict, 0x13, "") \
  X(Aliased, 0x14, "") \
  X(Volatile, 0x15, "") \
  X(Constant, 0x16, "") \
  X(Coherent, 0x17, "") \
  X(NonWritable, 0x18, "") \
  X(NonReadable, 0x19, "") \
  X(Uniform, 0x1a, "") \
  X(UniformId, 0x1b, "I") \
  X(SaturatedConversion, 0x1c, "") \
  X(Stream, 0x1d, "L") \
  X(Location, 0x1e, "L") \
  X(Component, 0x1f, "L") \
  X(Index, 0x20, "L") \
  X(Binding, 0x21, "L") \
  X(DescriptorSet, 0x22, "L") \
  X(Offset, 0x23, "L") \
  X(XfbBuffer, 0x24, "L") \
  X(XfbStride, 0x25, "L") \
  X(FuncParamAttr, 0x26, "{FunctionParameterAttribute}") \
  X(FPRoundingMode, 0x27, "{FPRoundingMode}") \
  X(FPFastMathMode, 0x28, "{FPFastMathMode}") \
  X(LinkageAttributes, 0x29, "S {LinkageType}") \
  X(NoContraction, 0x2a, "") \
  X(InputAttachmentIndex, 0x2b, "L") \
  X(Alignment, 0x2c, "L") \
  X(MaxByteOffset, 0x2d, "L") \
  X(AlignmentId, 0x2e, "I") \
  X(MaxByteOffsetId, 0x2f, "I") \
  X(NoSignedWrap, 0x1175, "") \
  X(NoUnsignedWrap, 0x1176, "") \
  X(NonUniform, 0x14b4, "") \
  X(NonUniformEXT, 0x14b4, "") \
  X(RestrictPointer, 0x14eb, "") \
  X(RestrictPointerEXT, 0x14eb, "") \
  X(AliasedPointer, 0x14ec, "") \
  X(AliasedPointerEXT, 0x14ec, "") \
  X(CounterBuffer, 0x1602, "I") \
  X(UserSemantic, 0x1603, "S")

// ValueEnum
#define DOORBELL_SPIRV_BUILT_IN(X) \
  X(Position, 0x0, "") \
  X(PointSize, 0x1, "") \
  X(ClipDistance, 0x3, "") \
  X(CullDistance, 0x4, "") \
  X(VertexId, 0x5, "") \
  X(InstanceId, 0x6, "") \
  X(PrimitiveId, 0x7, "") \
  X(InvocationId, 0x8, "") \
  X(Layer, 0x9, "") \
  X(ViewportIndex, 0xa, "") \
  X(TessLevelOuter, 0xb, "") \
  X(TessLevelInner, 0xc, "") \
  X(TessCoord, 0xd, "") \
  X(PatchVertices, 0xe, "") \
  X(FragCoord, 0xf, "") \
  X(PointCoord, 0x10, "") \
  X(FrontFacing, 0x11, "") \
  X(SampleId, 0x12, "") \
  X(SamplePosition, 0x13, "") \
  X(SampleMask, 0x14, "") \
  X(FragDepth, 0x16, "") \
  X(HelperInvocation, 0x17, "") \
  X(NumWorkgroups, 0x18, "") \
  X(WorkgroupSize, 0x19, "") \
  X(WorkgroupId, 0x1a, "") \
  X(LocalInvocationId, 0x1b, "") \
  X(GlobalInvocationId, 0x1c, "") \
  X(LocalInvocationIndex, 0x1d, "") \
  X(WorkDim, 0x1e, "") \
  X(GlobalSize, 0x1f, "") \
  X(EnqueuedWorkgroupSize, 0x20, "") \
  X(GlobalOffset, 0x21, "") \
  X(GlobalLinearId, 0x22, "") \
  X(SubgroupSize, 0x24, "") \
  X(SubgroupMaxSize, 0x25, "") \
  X(NumSubgroups, 0x26, "") \
  X(NumEnqueuedSubgroups, 0x27, "") \
  X(SubgroupId, 0x28, "") \
  X(SubgroupLocalInvocationId, 0x29, "") \
  X(VertexIndex, 0x2a, "") \
  X(InstanceIndex, 0x2b, "") \
  X(CoreIDARM, 0x1040, "") \
  X(CoreCountARM, 0x1041, "") \
  X(CoreMaxIDARM, 0x1042, "") \
  X(WarpIDARM, 0x1043, "") \
  X(WarpMaxIDARM, 0x1044, "") \
  X(SubgroupEqMask, 0x1140, "") \
  X(SubgroupEqMaskKHR, 0x1140, "") \
  X(SubgroupGeMask, 0x1141, "") \
  X(SubgroupGeMaskKHR, 0x1141, "") \
  X(SubgroupGtMask, 0x1142, "") \
  X(SubgroupGtMaskKHR, 0x1142, "") \
  X(SubgroupLeMask, 0x1143, "") \
  X(SubgroupLeMaskKHR, 0x1143, "") \
  X(SubgroupLtMask, 0x1144, "") \
  X(SubgroupLtMaskKHR, 0x1144, "") \
  X(BaseVertex, 0x1148, "") \
  X(BaseInstance, 0x1149, "") \
  X(DrawIndex, 0x114a, "") \
  X(DeviceIndex, 0x1156, "") \
  X(ViewIndex, 0x1158, "")

// ValueEnum
#define DOORBELL_SPIRV_SCOPE(X) \
  X(CrossDevice, 0x0, "") \
  X(Device, 0x1, "") \
  X(Workgroup, 0x2, "") \
  X(Subgroup, 0x3, "") \
  X(Invocation, 0x4, "") \
  X(QueueFamily, 0x5, "") \
  X(QueueFamilyKHR, 0x5, "")

// BitEnum
#define DOORBELL_SPIRV_MEMORY_SEMANTICS(X) \
  X(Relaxed, 0x0, "") \
  X(None, 0x0, "") \
  X(Acquire, 0x2, "") \
  X(Release, 0x4, "") \
  X(AcquireRelease, 0x8, "") \
  X(SequentiallyConsistent, 0x10, "") \
  X(UniformMemory, 0x40, "") \
  X(SubgroupMemory, 0x80, "") \
  X(WorkgroupMemory, 0x100, "") \
  X(CrossWorkgroupMemory, 0x200, "") \
  X(AtomicCounterMemory, 0x400, "") \
  X(ImageMemory, 0x800, "") \
  X(OutputMemory, 0x1000, "") \
  X(OutputMemoryKHR, 0x1000, "") \
  X(MakeAvailable, 0x2000, "") \
  X(MakeAvailableKHR, 0x2000, "") \
  X(MakeVisible, 0x4000, "") \
  X(MakeVisibleKHR, 0x4000, "") \
  X(Volatile, 0x8000, "")

// BitEnum
#define DOORBELL_SPIRV_MEMORY_ACCESS(X) \
  X(None, 0x0, "") \
  X(Volatile, 0x1, "") \
  X(Aligned, 0x2, "L") \
  X(Nontemporal, 0x4, "") \
  X(MakePointerAvailable, 0x8, "I") \
  X(MakePointerAvailableKHR, 0x8, "I") \
  X(MakePointerVisible, 0x10, "I") \
  X(MakePointerVisibleKHR, 0x10, "I") \
  X(NonPrivatePointer, 0x20, "") \
  X(NonPrivatePointerKHR, 0x20, "")

// BitEnum
#define DOORBELL_SPIRV_FUNCTION_CONTROL(X) \
  X(None, 0x0, "") \
  X(Inline, 0x1, "") \
  X(DontInline, 0x2, "") \
  X(Pure, 0x4, "") \
  X(Const, 0x8, "")

// BitEnum
#define DOORBELL_SPIRV_SELECTION_CONTROL(X) \
  X(None, 0x0, "") \
  X(Flatten, 0x1, "") \
  X(DontFlatten, 0x2, "")

// BitEnum
#define DOORBELL_SPIRV_LOOP_CONTROL(X) \
  X(None, 0x0, "") \
  X(Unroll, 0x1, "") \
  X(DontUnroll, 0x2, "") \
  X(DependencyInfinite, 0x4, "") \
  X(DependencyLength, 0x8, "L") \
  X(MinIterations, 0x10, "L") \
  X(MaxIterations, 0x20, "L") \
  X(IterationMultiple, 0x40, "L") \
  X(PeelCount, 0x80, "L") \
  X(PartialCount, 0x100, "L")

// ValueEnum
#define DOORBELL_SPIRV_SOURCE_LANGUAGE(X) \
  X(Unknown, 0x0, "") \
  X(ESSL, 0x1, "") \
  X(GLSL, 0x2, "") \
  X(OpenCL_C, 0x3, "") \
  X(OpenCL_CPP, 0x4, "") \
  X(HLSL, 0x5, "") \
  X(CPP_for_OpenCL, 0x6, "") \
  X(SYCL, 0x7, "")

// ValueEnum
#define DOORBELL_SPIRV_FP_ROUNDING_MODE(X) \
  X(RTE, 0x0, "") \
  X(RTZ, 0x1, "") \
  X(RTP, 0x2, "") \
  X(RTN, 0x3, "")

// BitEnum
#define DOORBELL_SPIRV_FP_FAST_MATH_MODE(X) \
  X(None, 0x0, "") \
  X(NotNaN, 0x1, "") \
  X(NotInf, 0x2, "") \
  X(NSZ, 0x4, "") \
  X(AllowRecip, 0x8, "") \
  X(Fast, 0x10, "")

// ValueEnum
#define DOORBELL_SPIRV_GROUP_OPERATION(X) \
  X(Reduce, 0x0, "") \
  X(InclusiveScan, 0x1, "") \
  X(ExclusiveScan, 0x2, "") \
  X(ClusteredReduce, 0x3, "")

#define DOORBELL_SPIRV_GLSL_STD_450(X) \
  X(Round, 1, "I") \
  X(RoundEven, 2, "I") \
  X(Trunc, 3, "I") \
  X(FAbs, 4, "I") \
  X(SAbs, 5, "I") \
  X(FSign, 6, "I") \
  X(SSign, 7, "I") \
  X(Floor, 8, "I") \
  X(Ceil, 9, "I") \
  X(Fract, 10, "I") \
  X(Radians, 11, "I") \
  X(Degrees, 12, "I") \
  X(Sin, 13, "I") \
  X(Cos, 14, "I") \
  X(Tan, 15, "I") \
  X(Asin, 16, "I") \
  X(Acos, 17, "I") \
  X(Atan, 18, "I") \
  X(Sinh, 19, "I") \
  X(Cosh, 20, "I") \
  X(Tanh, 21, "I") \
  X(Asinh, 22, "I") \
  X(Acosh, 23, "I") \
  X(Atanh, 24, "I") \
  X(Atan2, 25, "I I") \
  X(Pow, 26, "I I") \
  X(Exp, 27, "I") \
  X(Log, 28, "I") \
  X(Exp2, 29, "I") \
  X(Log2, 30, "I") \
  X(Sqrt, 31, "I") \
  X(InverseSqrt, 32, "I") \
  X(Determinant, 33, "I") \
  X(MatrixInverse, 34, "I") \
  X(Modf, 35, "I I") \
  X(ModfStruct, 36, "I") \
  X(FMin, 37, "I I") \
  X(UMin, 38, "I I") \
  X(SMin, 39, "I I") \
  X(FMax, 40, "I I") \
  X(UMax, 41, "I I") \
  X(SMax, 42, "I I") \
  X(FClamp, 43, "I I I") \
  X(UClamp, 44, "I I I") \
  X(SClamp, 45, "I I I") \
  X(FMix, 46, "I I I") \
  X(IMix, 47, "I I I") \
  X(Step, 48, "I I") \
  X(SmoothStep, 49, "I I I") \
  X(Fma, 50, "I I I") \
  X(Frexp, 51, "I I") \
  X(FrexpStruct, 52, "I") \
  X(Ldexp, 53, "I I") \
  X(PackSnorm4x8, 54, "I") \
  X(PackUnorm4x8, 55, "I") \
  X(PackSnorm2x16, 56, "I") \
  X(PackUnorm2x16, 57, "I") \
  X(PackHalf2x16, 58, "I") \
  X(PackDouble2x32, 59, "I") \
  X(UnpackSnorm2x16, 60, "I") \
  X(UnpackUnorm2x16, 61, "I") \
  X(UnpackHalf2x16, 62, "I") \
  X(UnpackSnorm4x8, 63, "I") \
  X(UnpackUnorm4x8, 64, "I") \
  X(UnpackDouble2x32, 65, "I") \
  X(Length, 66, "I") \
  X(Distance, 67, "I I") \
  X(Cross, 68, "I I") \
  X(Normalize, 69, "I") \
  X(FaceForward, 70, "I I I") \
  X(Reflect, 71, "I I") \
  X(Refract, 72, "I I I") \
  X(FindILsb, 73, "I") \
  X(FindSMsb, 74, "I") \
  X(FindUMsb, 75, "I") \
  X(InterpolateAtCentroid, 76, "I") \
  X(InterpolateAtSample, 77, "I I") \
  X(InterpolateAtOffset, 78, "I I") \
  X(NMin, 79, "I I") \
  X(NMax, 80, "I I") \
  X(NClamp, 81, "I I I")


// The enumerant kinds an Operand may carry (spirv_module.h).
enum class EnumKind : uint8_t {
  kNone,
  kCapability, kAddressingModel, kMemoryModel, kExecutionModel, kExecutionMode, kStorageClass, kDecoration, kBuiltIn,
  kScope, kMemorySemantics, kMemoryAccess, kFunctionControl, kSelectionControl, kLoopControl, kSourceLanguage,
  kFPRoundingMode, kFPFastMathMode, kGroupOperation,
};

#define DOORBELL_SPIRV_ENUMERANT(name, value, operands) name = value,
enum class Op : uint16_t { DOORBELL_SPIRV_OPS(DOORBELL_SPIRV_ENUMERANT) };
enum class Capability : uint32_t { DOORBELL_SPIRV_CAPABILITY(DOORBELL_SPIRV_ENUMERANT) };
enum class AddressingModel : uint32_t { DOORBELL_SPIRV_ADDRESSING_MODEL(DOORBELL_SPIRV_ENUMERANT) };
enum class MemoryModel : uint32_t { DOORBELL_SPIRV_MEMORY_MODEL(DOORBELL_SPIRV_ENUMERANT) };
enum class ExecutionModel : uint32_t { DOORBELL_SPIRV_EXECUTION_MODEL(DOORBELL_SPIRV_ENUMERANT) };
enum class ExecutionMode : uint32_t { DOORBELL_SPIRV_EXECUTION_MODE(DOORBELL_SPIRV_ENUMERANT) };
enum class StorageClass : uint32_t { DOORBELL_SPIRV_STORAGE_CLASS(DOORBELL_SPIRV_ENUMERANT) };
enum class Decoration : uint32_t { DOORBELL_SPIRV_DECORATION(DOORBELL_SPIRV_ENUMERANT) };
enum class BuiltIn : uint32_t { DOORBELL_SPIRV_BUILT_IN(DOORBELL_SPIRV_ENUMERANT) };
enum class Scope : uint32_t { DOORBELL_SPIRV_SCOPE(DOORBELL_SPIRV_ENUMERANT) };
enum class MemorySemantics : uint32_t { DOORBELL_SPIRV_MEMORY_SEMANTICS(DOORBELL_SPIRV_ENUMERANT) };
enum class MemoryAccess : uint32_t { DOORBELL_SPIRV_MEMORY_ACCESS(DOORBELL_SPIRV_ENUMERANT) };
enum class FunctionControl : uint32_t { DOORBELL_SPIRV_FUNCTION_CONTROL(DOORBELL_SPIRV_ENUMERANT) };
enum class SelectionControl : uint32_t { DOORBELL_SPIRV_SELECTION_CONTROL(DOORBELL_SPIRV_ENUMERANT) };
enum class LoopControl : uint32_t { DOORBELL_SPIRV_LOOP_CONTROL(DOORBELL_SPIRV_ENUMERANT) };
enum class SourceLanguage : uint32_t { DOORBELL_SPIRV_SOURCE_LANGUAGE(DOORBELL_SPIRV_ENUMERANT) };
enum class FPRoundingMode : uint32_t { DOORBELL_SPIRV_FP_ROUNDING_MODE(DOORBELL_SPIRV_ENUMERANT) };
enum class FPFastMathMode : uint32_t { DOORBELL_SPIRV_FP_FAST_MATH_MODE(DOORBELL_SPIRV_ENUMERANT) };
enum class GroupOperation : uint32_t { DOORBELL_SPIRV_GROUP_OPERATION(DOORBELL_SPIRV_ENUMERANT) };
enum class GLSLstd450 : uint32_t { DOORBELL_SPIRV_GLSL_STD_450(DOORBELL_SPIRV_ENUMERANT) };
#undef DOORBELL_SPIRV_ENUMERANT

template <class E> constexpr EnumKind enum_kind_of();
template <> constexpr EnumKind enum_kind_of<Capability>() { return EnumKind::kCapability; }
template <> constexpr EnumKind enum_kind_of<AddressingModel>() { return EnumKind::kAddressingModel; }
template <> constexpr EnumKind enum_kind_of<MemoryModel>() { return EnumKind::kMemoryModel; }
template <> constexpr EnumKind enum_kind_of<ExecutionModel>() { return EnumKind::kExecutionModel; }
template <> constexpr EnumKind enum_kind_of<ExecutionMode>() { return EnumKind::kExecutionMode; }
template <> constexpr EnumKind enum_kind_of<StorageClass>() { return EnumKind::kStorageClass; }
template <> constexpr EnumKind enum_kind_of<Decoration>() { return EnumKind::kDecoration; }
template <> constexpr EnumKind enum_kind_of<BuiltIn>() { return EnumKind::kBuiltIn; }
template <> constexpr EnumKind enum_kind_of<Scope>() { return EnumKind::kScope; }
template <> constexpr EnumKind enum_kind_of<MemorySemantics>() { return EnumKind::kMemorySemantics; }
template <> constexpr EnumKind enum_kind_of<MemoryAccess>() { return EnumKind::kMemoryAccess; }
template <> constexpr EnumKind enum_kind_of<FunctionControl>() { return EnumKind::kFunctionControl; }
template <> constexpr EnumKind enum_kind_of<SelectionControl>() { return EnumKind::kSelectionControl; }
template <> constexpr EnumKind enum_kind_of<LoopControl>() { return EnumKind::kLoopControl; }
template <> constexpr EnumKind enum_kind_of<SourceLanguage>() { return EnumKind::kSourceLanguage; }
template <> constexpr EnumKind enum_kind_of<FPRoundingMode>() { return EnumKind::kFPRoundingMode; }
template <> constexpr EnumKind enum_kind_of<FPFastMathMode>() { return EnumKind::kFPFastMathMode; }
template <> constexpr EnumKind enum_kind_of<GroupOperation>() { return EnumKind::kGroupOperation; }

// Lookups over the tables above (spirv_grammar.cpp). Names are the grammar's, without the "Op" prefix for
// opcodes (op_name gives "OpIAdd" with it, as the text shows).
const char* op_name(Op op);                            // "OpIAdd"; nullptr for an opcode not in the table
const char* op_operands(Op op);                        // the operand token string; nullptr when unknown
std::optional<Op> op_from_name(std::string_view name);  // "OpIAdd" -> Op::IAdd
const char* enum_kind_name(EnumKind kind);              // "StorageClass"
std::optional<EnumKind> enum_kind_from_name(std::string_view name);
const char* enumerant_name(EnumKind kind, uint32_t value);  // nullptr when not in the table
std::optional<uint32_t> enumerant_value(EnumKind kind, std::string_view name);
const char* enumerant_parameters(EnumKind kind, uint32_t value);  // "" for none; nullptr when unknown
bool is_mask_kind(EnumKind kind);  // a BitEnum (MemoryAccess, FunctionControl, ..., MemorySemantics)
const char* glsl_name(GLSLstd450 instruction);
std::optional<GLSLstd450> glsl_from_name(std::string_view name);

}  // namespace doorbell::spirv
