# The CUDA target (docs/cuda.md). Included by CMakeLists.txt once bessemer_core exists, when
# BESSEMER_CUDA is ON, or AUTO and a CUDA toolkit is found. The toolkit is needed for its headers
# only (cuda.h): the driver (libcuda.so.1) and NVRTC (libnvrtc.so) are opened at run time, so one
# build runs on machines with and without an NVIDIA GPU, and CI (toolkit, no GPU) builds it all.
#
# Sections:
#   runtime  — csrc/cuda/*.cpp and csrc/metal/runtime_cuda.cpp, BESSEMER_HAVE_CUDA
#   shaders  — each shaders/*.metal through the pre-pass's CUDA target, embedded for NVRTC

# ---- runtime ----
file(GLOB BESSEMER_CUDA_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/csrc/cuda/*.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/csrc/metal/runtime_cuda.cpp)
target_sources(bessemer_core PRIVATE ${BESSEMER_CUDA_SOURCES})
target_include_directories(bessemer_core PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(bessemer_core PUBLIC BESSEMER_HAVE_CUDA)
target_link_libraries(bessemer_core PUBLIC ${CMAKE_DL_LIBS})

# ---- shaders ----
