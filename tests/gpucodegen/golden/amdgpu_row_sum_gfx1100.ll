; doorbell kernel golden_row_sum: global_size (2, 1, 1), local_size (256, 1, 1)
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @golden_row_sum(ptr addrspace(1) noalias %data0, ptr addrspace(1) noalias %data1) #0 {
entry:
  %acc0 = alloca float, align 4, addrspace(5)
  %gidx0 = call i32 @llvm.amdgcn.workgroup.id.x()
  %lidx0 = call i32 @llvm.amdgcn.workitem.id.x()
  %v0 = mul i32 %gidx0, 256
  %v1 = add i32 %v0, %lidx0
  %v2 = icmp slt i32 %v1, 300
  %v3 = select i1 %v2, i32 %v1, i32 299
  store float 0x8000000000000000, ptr addrspace(5) %acc0
  %v4 = mul i32 %v3, 4
  br label %loop0
loop0:
  %ridx0 = phi i32 [ 0, %entry ], [ %ridx0_next, %loop0_latch ]
  %ridx0_cond = icmp slt i32 %ridx0, 4
  br i1 %ridx0_cond, label %loop0_body, label %loop0_exit
loop0_body:
  %v5 = add i32 %v4, %ridx0
  %v6 = getelementptr inbounds float, ptr addrspace(1) %data1, i32 %v5
  %v7 = load float, ptr addrspace(1) %v6, align 4
  %v8 = load float, ptr addrspace(5) %acc0
  %v9 = fadd float %v8, %v7
  store float %v9, ptr addrspace(5) %acc0
  br label %loop0_latch
loop0_latch:
  %ridx0_next = add i32 %ridx0, 1
  br label %loop0
loop0_exit:
  %v10 = load float, ptr addrspace(5) %acc0
  %v11 = fmul float %v10, 0x3FE0000000000000
  %v12 = call float @db_rh(float %v11)
  br i1 %v2, label %store1, label %store1_done
store1:
  %v13 = call i16 @db_f2h(float %v12)
  %v14 = getelementptr inbounds i16, ptr addrspace(1) %data0, i32 %v3
  store i16 %v13, ptr addrspace(1) %v14, align 2
  br label %store1_done
store1_done:
  ret void
}

define internal i16 @db_f2h(float %f) #1 {
  %x = bitcast float %f to i32
  %hi = lshr i32 %x, 16
  %sign = and i32 %hi, 32768
  %exp8 = lshr i32 %x, 23
  %exp = and i32 %exp8, 255
  %man = and i32 %x, 8388607
  %isspecial = icmp eq i32 %exp, 255
  %mans = lshr i32 %man, 13
  %nanpay = or i32 %mans, 512
  %hasman = icmp ne i32 %man, 0
  %payload = select i1 %hasman, i32 %nanpay, i32 0
  %sp1 = or i32 %sign, 31744
  %special = or i32 %sp1, %payload
  %e = sub i32 %exp, 112
  %overflow = icmp sge i32 %e, 31
  %eshift = shl i32 %e, 10
  %nh = or i32 %eshift, %mans
  %rem = and i32 %man, 8191
  %gt = icmp ugt i32 %rem, 4096
  %eq = icmp eq i32 %rem, 4096
  %odd = and i32 %nh, 1
  %isodd = icmp ne i32 %odd, 0
  %tie = and i1 %eq, %isodd
  %up = or i1 %gt, %tie
  %upz = zext i1 %up to i32
  %nr = add i32 %nh, %upz
  %normal = or i32 %sign, %nr
  %tiny = icmp slt i32 %e, -10
  %mfull = or i32 %man, 8388608
  %shift0 = sub i32 14, %e
  %shift = and i32 %shift0, 31
  %hm = lshr i32 %mfull, %shift
  %one = shl i32 1, %shift
  %mask = sub i32 %one, 1
  %srem = and i32 %mfull, %mask
  %halfway = lshr i32 %one, 1
  %sgt = icmp ugt i32 %srem, %halfway
  %seq = icmp eq i32 %srem, %halfway
  %hodd = and i32 %hm, 1
  %hisodd = icmp ne i32 %hodd, 0
  %stie = and i1 %seq, %hisodd
  %sup = or i1 %sgt, %stie
  %supz = zext i1 %sup to i32
  %hmr = add i32 %hm, %supz
  %sub1 = or i32 %sign, %hmr
  %subn = select i1 %tiny, i32 %sign, i32 %sub1
  %issub = icmp sle i32 %e, 0
  %r1 = select i1 %issub, i32 %subn, i32 %normal
  %r2 = select i1 %overflow, i32 %sp1, i32 %r1
  %r3 = select i1 %isspecial, i32 %special, i32 %r2
  %r = trunc i32 %r3 to i16
  ret i16 %r
}
define internal float @db_h2f(i16 %h) #1 {
  %hf = bitcast i16 %h to half
  %f = fpext half %hf to float
  %hz = zext i16 %h to i32
  %exp = and i32 %hz, 31744
  %man = and i32 %hz, 1023
  %e31 = icmp eq i32 %exp, 31744
  %hasman = icmp ne i32 %man, 0
  %isnan = and i1 %e31, %hasman
  %s = and i32 %hz, 32768
  %sign = shl i32 %s, 16
  %m13 = shl i32 %man, 13
  %b1 = or i32 %sign, 2139095040
  %b2 = or i32 %b1, %m13
  %nf = bitcast i32 %b2 to float
  %r = select i1 %isnan, float %nf, float %f
  ret float %r
}
define internal i16 @db_f2bf(float %f) #1 {
  %u = bitcast float %f to i32
  %isnan = fcmp uno float %f, 0.0
  %hi = lshr i32 %u, 16
  %nanbits = or i32 %hi, 64
  %lsb = and i32 %hi, 1
  %bias = add i32 %lsb, 32767
  %r = add i32 %u, %bias
  %rh = lshr i32 %r, 16
  %sel = select i1 %isnan, i32 %nanbits, i32 %rh
  %t = trunc i32 %sel to i16
  ret i16 %t
}
define internal float @db_bf2f(i16 %b) #1 {
  %z = zext i16 %b to i32
  %s = shl i32 %z, 16
  %f = bitcast i32 %s to float
  ret float %f
}
define internal float @db_rh(float %f) #1 {
  %h = call i16 @db_f2h(float %f)
  %r = call float @db_h2f(i16 %h)
  ret float %r
}
define internal float @db_rbf(float %f) #1 {
  %h = call i16 @db_f2bf(float %f)
  %r = call float @db_bf2f(i16 %h)
  ret float %r
}

declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,256" "uniform-work-group-size"="true" "amdgpu-no-implicitarg-ptr" }
attributes #1 = { alwaysinline nounwind }
