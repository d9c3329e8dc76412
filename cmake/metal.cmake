# The real Metal backend, on Apple platforms only (included by CMakeLists.txt once bessemer_core
# exists; BESSEMER_SHADERS lists shaders/*.metal). It
#   - compiles each shader with `xcrun -sdk macosx metal` into an .air file and links them into
#     bessemer.metallib, installed beside the _core module (the `bessemer` package directory),
#     when Xcode's Metal compiler is there;
#   - embeds the same shaders as MSL source (csrc/metal/embed_shaders.py), which runtime_metal.cpp
#     compiles at run time when no bessemer.metallib is found;
#   - builds csrc/metal/runtime_metal.cpp against metal-cpp (METAL_CPP_DIR, or Apple's release
#     fetched at configure time) and defines BESSEMER_HAVE_METAL, which registers device "metal".
# On Linux, tools/metal_check/run.sh compile-checks runtime_metal.cpp against the same headers and
# runs this file in a scratch project with a stand-in xcrun (tools/metal_check/cmake_branch.sh).

get_filename_component(_bm_root ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
if(NOT DEFINED BESSEMER_INPLACE_DIR)
  set(BESSEMER_INPLACE_DIR ${_bm_root}/python/bessemer)  # where the in-place _core is written
endif()

set(METAL_CPP_DIR "" CACHE PATH "metal-cpp headers (the directory that holds Metal/Metal.hpp); empty: download Apple's release")
if(METAL_CPP_DIR)
  if(NOT EXISTS "${METAL_CPP_DIR}/Metal/Metal.hpp")
    message(FATAL_ERROR "METAL_CPP_DIR=${METAL_CPP_DIR} holds no Metal/Metal.hpp")
  endif()
  set(BESSEMER_METAL_CPP_INCLUDE "${METAL_CPP_DIR}")
else()
  include(FetchContent)
  if(POLICY CMP0135)
    cmake_policy(SET CMP0135 NEW)  # extracted files get the extraction time
  endif()
  FetchContent_Declare(metal_cpp
    URL https://developer.apple.com/metal/cpp/files/metal-cpp_26.zip
    URL_HASH SHA256=4df3c078b9aadcb516212e9cb03004cbc5ce9a3e9c068fa3144d021db585a3a4)
  FetchContent_MakeAvailable(metal_cpp)  # headers only: the archive has no CMakeLists.txt to add
  set(BESSEMER_METAL_CPP_INCLUDE "${metal_cpp_SOURCE_DIR}")
endif()

# ---- bessemer.metallib ----
# The Metal compiler comes with Xcode (since Xcode 26 as its separate "Metal Toolchain" component),
# not with the Command Line Tools alone. Without it the build still works: the runtime compiles
# the embedded source on first use instead of loading a precompiled library.
option(BESSEMER_REQUIRE_METALLIB "Fail the build when the Metal compiler (xcrun metal) is missing" OFF)
find_program(BESSEMER_XCRUN xcrun REQUIRED)
file(GLOB BESSEMER_SHADER_HEADERS CONFIGURE_DEPENDS ${_bm_root}/shaders/*.h)
execute_process(COMMAND ${BESSEMER_XCRUN} -sdk macosx metal --version
  RESULT_VARIABLE _bm_metal_rc OUTPUT_QUIET ERROR_VARIABLE _bm_metal_err)
if(NOT _bm_metal_rc EQUAL 0)
  string(STRIP "${_bm_metal_err}" _bm_metal_err)
  string(CONCAT _bm_msg "no Metal compiler: `xcrun -sdk macosx metal` failed (${_bm_metal_err}). Install Xcode, "
              "select it (sudo xcode-select -s /Applications/Xcode.app/Contents/Developer) and, from Xcode 26 "
              "on, run `xcodebuild -downloadComponent MetalToolchain`.")
  if(BESSEMER_REQUIRE_METALLIB)
    message(FATAL_ERROR "${_bm_msg}")
  endif()
  message(WARNING "${_bm_msg}\nBuilding without bessemer.metallib: the shaders will be compiled from the "
                  "embedded source the first time the GPU is used.")
  if(BESSEMER_INPLACE)
    file(REMOVE ${BESSEMER_INPLACE_DIR}/bessemer.metallib)  # a stale one would be loaded instead
  endif()
else()
  set(_bm_air_dir ${CMAKE_CURRENT_BINARY_DIR}/metal_air)
  set(_bm_airs)
  foreach(metal IN LISTS BESSEMER_SHADERS)
    get_filename_component(name ${metal} NAME_WE)
    set(air ${_bm_air_dir}/${name}.air)
    # No fast math: NaN and infinity must behave as on the CPU backend.
    add_custom_command(OUTPUT ${air}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_bm_air_dir}
      COMMAND ${BESSEMER_XCRUN} -sdk macosx metal -fno-fast-math -std=metal3.1 -c ${metal} -o ${air}
      DEPENDS ${metal} ${BESSEMER_SHADER_HEADERS}
      COMMENT "metal: ${name}.metal" VERBATIM)
    list(APPEND _bm_airs ${air})
  endforeach()
  set(BESSEMER_METALLIB ${CMAKE_CURRENT_BINARY_DIR}/bessemer.metallib)
  add_custom_command(OUTPUT ${BESSEMER_METALLIB}
    COMMAND ${BESSEMER_XCRUN} -sdk macosx metallib ${_bm_airs} -o ${BESSEMER_METALLIB}
    DEPENDS ${_bm_airs}
    COMMENT "metallib: bessemer.metallib" VERBATIM)
  add_custom_target(bessemer_metallib ALL DEPENDS ${BESSEMER_METALLIB})
  if(BESSEMER_BUILD_PYTHON)
    install(FILES ${BESSEMER_METALLIB} DESTINATION bessemer)
  endif()
  if(BESSEMER_INPLACE)
    # Beside the in-place _core in python/bessemer, where the runtime looks for it.
    add_custom_command(TARGET bessemer_metallib POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${BESSEMER_METALLIB} ${BESSEMER_INPLACE_DIR}/bessemer.metallib
      VERBATIM)
  endif()
endif()

# ---- the embedded MSL source, the runtime's fallback ----
set(_bm_gen ${CMAKE_CURRENT_BINARY_DIR}/generated)
set(_bm_sources_h ${_bm_gen}/metal/shader_sources.h)
add_custom_command(OUTPUT ${_bm_sources_h}
  COMMAND ${Python_EXECUTABLE} ${_bm_root}/csrc/metal/embed_shaders.py -o ${_bm_sources_h} ${BESSEMER_SHADERS}
  DEPENDS ${BESSEMER_SHADERS} ${BESSEMER_SHADER_HEADERS} ${_bm_root}/csrc/metal/embed_shaders.py
  COMMENT "embedding shaders/*.metal as MSL source" VERBATIM)
target_sources(bessemer_core PRIVATE ${_bm_sources_h})

# ---- metal-cpp runtime ----
target_include_directories(bessemer_core PRIVATE ${_bm_gen})
target_include_directories(bessemer_core SYSTEM PRIVATE ${BESSEMER_METAL_CPP_INCLUDE})
target_compile_definitions(bessemer_core PUBLIC BESSEMER_HAVE_METAL)
target_link_libraries(bessemer_core PUBLIC "-framework Metal" "-framework Foundation" "-framework QuartzCore")
