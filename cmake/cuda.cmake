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
# prepass.py --target cuda turns each shader into one self-contained NVRTC source (the stand-in of
# csrc/cuda/include and csrc/cuda/abi.h inlined); embed_sources.py gathers them into one .cpp
# implementing csrc/cuda/sources.h. runtime_cuda.cpp compiles them at load time.
set(BESSEMER_CUDA_GEN ${CMAKE_CURRENT_BINARY_DIR}/cuda)
set(BESSEMER_CUDA_EMBED ${CMAKE_CURRENT_SOURCE_DIR}/csrc/cuda/embed_sources.py)
file(GLOB BESSEMER_CUDA_STANDIN CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/csrc/cuda/include/*
  ${CMAKE_CURRENT_SOURCE_DIR}/csrc/cuda/stdlib/*.h
  ${CMAKE_CURRENT_SOURCE_DIR}/csrc/cuda/abi.h)
set(BESSEMER_CUDA_TRANSLATIONS)
set(BESSEMER_CUDA_EMBED_ARGS)
foreach(metal IN LISTS BESSEMER_SHADERS)
  get_filename_component(dir ${metal} DIRECTORY)
  get_filename_component(name ${metal} NAME)
  file(GLOB headers CONFIGURE_DEPENDS ${dir}/*.h)
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${metal})
  set(out ${BESSEMER_CUDA_GEN}/shaders/${name}.cu)
  add_custom_command(OUTPUT ${out}
    COMMAND ${Python_EXECUTABLE} ${BESSEMER_MSL_PREPASS} ${metal} -o ${out} --root ${CMAKE_CURRENT_SOURCE_DIR} --target cuda
    DEPENDS ${metal} ${headers} ${BESSEMER_MSL_STDLIB} ${BESSEMER_CUDA_STANDIN}
    COMMENT "CUDA pre-pass: ${name}" VERBATIM)
  list(APPEND BESSEMER_CUDA_TRANSLATIONS ${out})
  list(APPEND BESSEMER_CUDA_EMBED_ARGS "${rel}=${out}")
endforeach()
set(BESSEMER_CUDA_SOURCES_CPP ${BESSEMER_CUDA_GEN}/cuda_sources.cpp)
add_custom_command(OUTPUT ${BESSEMER_CUDA_SOURCES_CPP}
  COMMAND ${Python_EXECUTABLE} ${BESSEMER_CUDA_EMBED} -o ${BESSEMER_CUDA_SOURCES_CPP} ${BESSEMER_CUDA_EMBED_ARGS}
  DEPENDS ${BESSEMER_CUDA_TRANSLATIONS} ${BESSEMER_CUDA_EMBED}
  COMMENT "Embedding the shaders' CUDA sources" VERBATIM)
target_sources(bessemer_core PRIVATE ${BESSEMER_CUDA_SOURCES_CPP})
