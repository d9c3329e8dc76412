// Controls for the metal-cpp syntax check (run.sh): this file must compile as it is, and must
// fail to compile with any one BM_MISUSE_<n> defined. If a misuse compiled, the headers or stubs
// would be accepting anything and the check of runtime_metal.cpp would prove nothing.
#include <Foundation/Foundation.hpp>
#include <Metal/Metal.hpp>

void bm_metal_check_controls(MTL::Device* device, MTL::CommandQueue* queue, MTL::Library* lib) {
  MTL::Buffer* buf = device->newBuffer(16, MTL::ResourceStorageModeShared);
  MTL::CommandBuffer* cb = queue->commandBuffer();
  MTL::ComputeCommandEncoder* enc = cb->computeCommandEncoder();
  MTL::Function* fn = lib->newFunction(NS::String::string("k", NS::UTF8StringEncoding));
  int x = 0;
  enc->setBuffer(buf, 0, 0);
  enc->setBytes(&x, sizeof x, 1);
  enc->dispatchThreads(MTL::Size(1, 1, 1), MTL::Size(1, 1, 1));
  enc->endEncoding();
  cb->commit();
  fn->release();
  buf->release();
#if defined(BM_MISUSE_1)
  lib->newFunction("k");  // a C string where metal-cpp takes NS::String*
#elif defined(BM_MISUSE_2)
  enc->setBytes(&x, sizeof x);  // no buffer index
#elif defined(BM_MISUSE_3)
  enc->setBuffer(*buf, 0, 0);  // a reference where a pointer is taken
#elif defined(BM_MISUSE_4)
  cb->waitUntilComplete();  // no such method (waitUntilCompleted)
#endif
}
