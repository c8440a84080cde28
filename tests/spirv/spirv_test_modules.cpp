#include "tests/spirv/spirv_test_modules.h"

#include <bit>
#include <random>

namespace doorbell::testing {

using namespace spirv;

// A complete GLCompute kernel in the shape of spirv_kernel_abi.h: the push constant block holds the argument
// block's address (a uint64); the kernel converts it to a PhysicalStorageBuffer pointer, loads buffer 0's address
// from it and stores 1.5f there. A function variable is made mid-function, after the loads.
Module minimal_kernel() {
  Module m;
  m.capability(Capability::Shader);
  m.capability(Capability::Int64);
  m.capability(Capability::PhysicalStorageBufferAddresses);
  m.capability(Capability::Shader);  // asked twice, declared once
  m.ext_inst_import("GLSL.std.450");
  m.memory_model(AddressingModel::PhysicalStorageBuffer64, MemoryModel::GLSL450);
  const Id t_void = m.type_void();
  const Id t_f32 = m.type_float(32);
  const Id t_u32 = m.type_int(32, false);
  const Id t_u64 = m.type_int(64, false);
  const Id t_block = m.type_struct({t_u64});
  m.decorate(t_block, Decoration::Block);
  m.member_decorate(t_block, 0, Decoration::Offset, {0});
  const Id t_pc_block = m.type_pointer(StorageClass::PushConstant, t_block);
  const Id t_pc_u64 = m.type_pointer(StorageClass::PushConstant, t_u64);
  const Id t_psb_u64 = m.type_pointer(StorageClass::PhysicalStorageBuffer, t_u64);
  const Id t_psb_f32 = m.type_pointer(StorageClass::PhysicalStorageBuffer, t_f32);
  const Id t_fn_f32 = m.type_pointer(StorageClass::Function, t_f32);
  const Id args = m.global_variable(t_pc_block, StorageClass::PushConstant);
  m.name(args, "args");
  const Id t_main = m.type_function(t_void, {});
  const Id main = m.begin_function(t_void, t_main);
  m.name(main, "main");
  m.label();
  const Id field = m.op(Op::AccessChain, t_pc_u64, {Operand::id(args), Operand::id(m.constant(t_u32, 0))});
  const Id block_address = m.op(Op::Load, t_u64, {Operand::id(field)});
  const Id block = m.op(Op::ConvertUToPtr, t_psb_u64, {Operand::id(block_address)});
  const Id buffer_address =
      m.op(Op::Load, t_u64, {Operand::id(block), Operand::mask(MemoryAccess::Aligned, 0x2), Operand::word(8)});
  const Id out = m.op(Op::ConvertUToPtr, t_psb_f32, {Operand::id(buffer_address)});
  const Id local = m.function_variable(t_fn_f32);  // mid-function: must land at the top of the first block
  m.op_void(Op::Store, {Operand::id(local), Operand::id(m.constant(t_f32, std::bit_cast<uint32_t>(1.5f)))});
  const Id value = m.op(Op::Load, t_f32, {Operand::id(local)});
  const Id root = m.glsl(GLSLstd450::Sqrt, t_f32, {value});
  m.op_void(Op::Store,
            {Operand::id(out), Operand::id(root), Operand::mask(MemoryAccess::Aligned, 0x2), Operand::word(4)});
  m.op_void(Op::Return);
  m.end_function();
  m.entry_point(ExecutionModel::GLCompute, main, "main", {args});
  m.execution_mode(main, ExecutionMode::LocalSize, {64, 1, 1});
  return m;
}

namespace {

// A GLCompute entry point of one empty function, so a module of declarations is complete.
void add_empty_kernel(Module& m) {
  const Id t_void = m.type_void();
  const Id fn = m.begin_function(t_void, m.type_function(t_void, {}));
  m.label();
  m.op_void(Op::Return);
  m.end_function();
  m.entry_point(ExecutionModel::GLCompute, fn, "empty", {});
  m.execution_mode(fn, ExecutionMode::LocalSize, {1, 1, 1});
}

}  // namespace

Module edge_constants(uint32_t seed, int random_floats) {
  Module m;
  for (Capability c : {Capability::Shader, Capability::Int8, Capability::Int16, Capability::Int64, Capability::Float16,
                       Capability::Float64}) {
    m.capability(c);
  }
  m.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
  for (uint32_t width : {8u, 16u, 32u, 64u}) {
    const Id s = m.type_int(width, true);
    const Id u = m.type_int(width, false);
    const uint64_t all = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    const uint64_t sign = uint64_t{1} << (width - 1);
    for (uint64_t bits : {uint64_t{0}, uint64_t{1}, sign, sign - 1, all, all - 1}) {
      m.constant(s, bits);  // 0, 1, min, max, -1, -2
      m.constant(u, bits);
    }
  }
  std::mt19937_64 random(seed);
  for (uint32_t width : {16u, 32u, 64u}) {
    const Id f = m.type_float(width);
    const int mantissa = width == 16 ? 10 : width == 32 ? 23 : 52;
    const uint64_t sign = uint64_t{1} << (width - 1);
    const uint64_t exponent_all = (sign - 1) & ~((uint64_t{1} << mantissa) - 1);
    const uint64_t fraction_all = (uint64_t{1} << mantissa) - 1;
    const uint64_t quiet = uint64_t{1} << (mantissa - 1);
    const uint64_t one = (exponent_all >> 1) & exponent_all;                  // exponent field = bias
    for (uint64_t bits : {uint64_t{0}, sign,                                  // +0, -0
                          uint64_t{1}, sign | 1, fraction_all,                // denormals: min, -min, max
                          uint64_t{1} << mantissa,                            // min normal
                          exponent_all - 1,                                   // max normal
                          exponent_all, sign | exponent_all,                  // +inf, -inf
                          exponent_all | quiet, sign | exponent_all | quiet,  // quiet NaNs
                          exponent_all | 1, sign | exponent_all | quiet | 5,  // NaNs with payloads
                          exponent_all | fraction_all, one, one | 1}) {
      m.constant(f, bits);
    }
    for (int i = 0; i < random_floats; ++i) m.constant(f, random() & (sign | (sign - 1)));
  }
  add_empty_kernel(m);
  return m;
}

Module control_flow_kernel() {
  Module m;
  m.capability(Capability::Shader);
  m.capability(Capability::GroupNonUniform);
  m.capability(Capability::GroupNonUniformArithmetic);
  m.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
  const Id t_void = m.type_void();
  const Id t_bool = m.type_bool();
  const Id t_u32 = m.type_int(32, false);
  const Id t_f32 = m.type_float(32);
  const Id t_v3 = m.type_vector(t_u32, 3);
  const Id t_in_v3 = m.type_pointer(StorageClass::Input, t_v3);
  const Id local_id = m.global_variable(t_in_v3, StorageClass::Input);
  m.decorate(local_id, Decoration::BuiltIn, {static_cast<uint32_t>(BuiltIn::LocalInvocationId)});
  m.name(local_id, "local \"id\" \\ x");
  const Id c64 = m.constant(t_u32, 64);
  const Id t_arr = m.type_array(t_f32, c64);
  const Id t_wg_arr = m.type_pointer(StorageClass::Workgroup, t_arr);
  const Id t_wg_f32 = m.type_pointer(StorageClass::Workgroup, t_f32);
  const Id shared = m.global_variable(t_wg_arr, StorageClass::Workgroup);
  const Id t_v2f = m.type_vector(t_f32, 2);
  const Id pair =
      m.constant_composite(t_v2f, {m.constant(t_f32, std::bit_cast<uint32_t>(0.25f)), m.constant_null(t_f32)});
  const Id fn = m.begin_function(t_void, m.type_function(t_void, {}), 0x2 /* DontInline */);
  const Id entry = m.label();
  const Id header = m.new_id();
  const Id body = m.new_id();
  const Id cont = m.new_id();
  const Id merge = m.new_id();
  const Id then_block = m.new_id();
  const Id after = m.new_id();
  const Id id_ptr = m.op(Op::Load, t_v3, {Operand::id(local_id)});
  const Id lane = m.op(Op::CompositeExtract, t_u32, {Operand::id(id_ptr), Operand::word(0)});
  const Id slot = m.op(Op::AccessChain, t_wg_f32, {Operand::id(shared), Operand::id(lane)});
  const Id first = m.op(Op::CompositeExtract, t_f32, {Operand::id(pair), Operand::word(0)});
  m.op_void(Op::Store, {Operand::id(slot), Operand::id(first)});
  const Id workgroup = m.constant(t_u32, static_cast<uint32_t>(Scope::Workgroup));
  const Id semantics = m.constant(t_u32, static_cast<uint32_t>(MemorySemantics::AcquireRelease) |
                                             static_cast<uint32_t>(MemorySemantics::WorkgroupMemory));
  m.op_void(Op::ControlBarrier, {Operand::id(workgroup), Operand::id(workgroup), Operand::id(semantics)});
  m.op_void(Op::Branch, {Operand::id(header)});
  m.label(header);
  const Id i_next = m.new_id();
  const Id acc_next = m.new_id();
  const Id i = m.op(Op::Phi, t_u32,
                    {Operand::id(m.constant(t_u32, 0)), Operand::id(entry), Operand::id(i_next), Operand::id(cont)});
  const Id acc =
      m.op(Op::Phi, t_f32,
           {Operand::id(m.constant(t_f32, 0)), Operand::id(entry), Operand::id(acc_next), Operand::id(cont)});
  const Id more = m.op(Op::ULessThan, t_bool, {Operand::id(i), Operand::id(c64)});
  m.op_void(Op::LoopMerge,
            {Operand::id(merge), Operand::id(cont), Operand::mask(LoopControl::None, 0x2 | 0x8), Operand::word(4)});
  m.op_void(Op::BranchConditional, {Operand::id(more), Operand::id(body), Operand::id(merge)});
  m.label(body);
  const Id element = m.op(Op::Load, t_f32,
                          {Operand::id(m.op(Op::AccessChain, t_wg_f32, {Operand::id(shared), Operand::id(i)})),
                           Operand::mask(MemoryAccess::None, 0x1 | 0x2), Operand::word(4)});
  m.op(Op::FAdd, t_f32, {Operand::id(acc), Operand::id(element)}, acc_next);
  m.op_void(Op::Branch, {Operand::id(cont)});
  m.label(cont);
  m.op(Op::IAdd, t_u32, {Operand::id(i), Operand::id(m.constant(t_u32, 1))}, i_next);
  m.op_void(Op::Branch, {Operand::id(header)});
  m.label(merge);
  const Id subgroup = m.constant(t_u32, static_cast<uint32_t>(Scope::Subgroup));
  const Id total = m.op(Op::GroupNonUniformFAdd, t_f32,
                        {Operand::id(subgroup), Operand::e(GroupOperation::Reduce), Operand::id(acc)});
  const Id positive = m.op(Op::FOrdGreaterThan, t_bool, {Operand::id(total), Operand::id(m.constant(t_f32, 0))});
  const Id is_true = m.op(Op::LogicalAnd, t_bool, {Operand::id(positive), Operand::id(m.constant_bool(true))});
  m.op_void(Op::SelectionMerge, {Operand::id(after), Operand::mask(SelectionControl::None, 0)});
  m.op_void(Op::BranchConditional, {Operand::id(is_true), Operand::id(then_block), Operand::id(after)});
  m.label(then_block);
  m.op_void(Op::Store, {Operand::id(slot), Operand::id(m.glsl(GLSLstd450::FMax, t_f32, {total, first}))});
  m.op_void(Op::Branch, {Operand::id(after)});
  m.label(after);
  m.op_void(Op::Return);
  m.end_function();
  m.entry_point(ExecutionModel::GLCompute, fn, "control \"flow\"", {local_id, shared});
  m.execution_mode(fn, ExecutionMode::LocalSize, {64, 1, 1});
  return m;
}

Module switch_kernel() {
  Module m;
  m.capability(Capability::Shader);
  m.capability(Capability::Int64);
  m.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
  const Id t_void = m.type_void();
  const Id t_i64 = m.type_int(64, true);
  const Id t_i32 = m.type_int(32, true);
  const Id fn = m.begin_function(t_void, m.type_function(t_void, {}));
  m.label();
  const Id v64 = m.function_variable(m.type_pointer(StorageClass::Function, t_i64));
  const Id v32 = m.function_variable(m.type_pointer(StorageClass::Function, t_i32));
  m.op_void(Op::Store, {Operand::id(v64), Operand::id(m.constant(t_i64, 7))});
  m.op_void(Op::Store, {Operand::id(v32), Operand::id(m.constant(t_i32, 7))});
  // A 64-bit signed selector: case literals of two words, printed signed.
  const Id sel64 = m.op(Op::Load, t_i64, {Operand::id(v64)});
  const Id a = m.new_id(), b = m.new_id(), d = m.new_id(), merge = m.new_id();
  m.op_void(Op::SelectionMerge, {Operand::id(merge), Operand::mask(SelectionControl::None, 0)});
  m.op_void(Op::Switch, {Operand::id(sel64), Operand::id(d), Operand::word64(~uint64_t{0}), Operand::id(a),
                         Operand::word64(uint64_t{1} << 63), Operand::id(b)});
  for (Id block : {a, b, d}) {
    m.label(block);
    m.op_void(Op::Branch, {Operand::id(merge)});
  }
  m.label(merge);
  // A 32-bit signed selector: one word per case.
  const Id sel32 = m.op(Op::Load, t_i32, {Operand::id(v32)});
  const Id c = m.new_id(), merge2 = m.new_id();
  m.op_void(Op::SelectionMerge, {Operand::id(merge2), Operand::mask(SelectionControl::None, 0)});
  m.op_void(Op::Switch, {Operand::id(sel32), Operand::id(merge2), Operand::word(0xfffffffeu), Operand::id(c)});
  m.label(c);
  m.op_void(Op::Branch, {Operand::id(merge2)});
  m.label(merge2);
  m.op_void(Op::Return);
  m.end_function();
  m.entry_point(ExecutionModel::GLCompute, fn, "switches", {});
  m.execution_mode(fn, ExecutionMode::LocalSize, {1, 1, 1});
  return m;
}

std::vector<NamedModule> all_test_modules() {
  std::vector<NamedModule> out;
  out.push_back({"minimal_kernel", minimal_kernel()});
  out.push_back({"edge_constants", edge_constants()});
  out.push_back({"control_flow_kernel", control_flow_kernel()});
  out.push_back({"switch_kernel", switch_kernel()});
  return out;
}

}  // namespace doorbell::testing
