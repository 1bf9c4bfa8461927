-- One rank (pid 100, device 0), kernels on three streams that overlap; the answer by hand:
--   compute: [0,100) s7 GEMM, [50,150) s13 elementwise, [400,500) s7 GEMM
--   comm:    [120,300) s20 SendRecv, [280,320) s21 AllGather, [600,700) s20 SendRecv
--   span = 700; compute union = [0,150)+[400,500) = 250; comm union = [120,320)+[600,700) = 300
--   both = [120,150) = 30; busy = 250 + 300 - 30 = 520; idle = 180
INSERT INTO StringIds VALUES (1, 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64'),
  (2, 'void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, T2)'),
  (3, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'),
  (4, 'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)');
INSERT INTO PROCESSES VALUES (1677721600, 100, 'python');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid, demangledName, shortName) VALUES
  (0, 100, 0, 7, 1, 1677721600, 1, 1),
  (50, 150, 0, 13, 2, 1677721600, 2, 2),
  (120, 300, 0, 20, 3, 1677721600, 3, 3),
  (280, 320, 0, 21, 4, 1677721600, 4, 4),
  (400, 500, 0, 7, 5, 1677721600, 1, 1),
  (600, 700, 0, 20, 6, 1677721600, 3, 3);
