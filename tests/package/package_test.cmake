# cmake -P script run by ctest (tests/package/CMakeLists.txt). Steps, each fatal on failure:
#  1. cmake --install NPU_BUILD_DIR --prefix WORK_DIR/prefix; `nm` of the installed libnpu.a
#     shows no mock-kernel-driver / emulator symbols (libnpu is the driver only) and no runtime
#  2. configure, build and run tests/package/consumer against that prefix (CMake package)
#  3. compile consumer/main.c with `pkg-config --cflags --static --libs npu-emu` and run it
#  4. the installed tools answer --help and npu-info prints the device
#  5. with NPU_PYTHON (the module was built): the installed package `npu` imports from the
#     prefix's site-packages and runs a job there
cmake_minimum_required(VERSION 3.25)
foreach(var NPU_BUILD_DIR NPU_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "package_test.cmake: ${var} is not set")
  endif()
endforeach()

function(run)
  cmake_parse_arguments(R "" "WORKING_DIRECTORY" "COMMAND;ENV" ${ARGN})
  if(NOT R_WORKING_DIRECTORY)
    set(R_WORKING_DIRECTORY ${WORK_DIR})
  endif()
  string(JOIN " " pretty ${R_COMMAND})
  message(STATUS "run: ${pretty}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${R_ENV} -- ${R_COMMAND}
                  WORKING_DIRECTORY ${R_WORKING_DIRECTORY}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${pretty}\n${out}\n${err}")
  endif()
  set(RUN_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. install
run(COMMAND ${CMAKE_COMMAND} --install ${NPU_BUILD_DIR} --prefix ${prefix})
foreach(f bin/npu-info bin/npu-submit bin/npu-as bin/npu-objdump bin/npu-selftest
          include/npu/uapi/npu_accel.h include/npu/uapi/npu_isa.h include/npu/device.h
          include/npu/testing/mock_kernel.h include/npu/isa/validate.h include/npu/ref/interp.h
          include/npu/emu/kmd.h include/npu/emu/backend.h include/npu/emu/emulator_kernel.h
          include/npu/runtime/model.h include/npu/runtime/batch.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
# libnpu is the driver only: nothing of the emulator (npu::emu::Kmd, the device model,
# EmulatorKernel, the backend's registrar) nor of the runtime (npu::Model) is in its archive,
# defined or referenced.
file(GLOB_RECURSE libnpu_archives ${prefix}/*/libnpu.a)
if(NOT libnpu_archives)
  message(FATAL_ERROR "libnpu.a not installed under ${prefix}")
endif()
find_program(NM_PROGRAM nm REQUIRED)
list(GET libnpu_archives 0 libnpu_archive)
run(COMMAND ${NM_PROGRAM} -C ${libnpu_archive})
# Line by line (a regex over the whole output backtracks quadratically on the large symbol
# table of a sanitizer build). Brackets and semicolons in demangled names are escaped first.
string(REPLACE "[" "<" nm_text "${RUN_OUTPUT}")
string(REPLACE "]" ">" nm_text "${nm_text}")
string(REPLACE ";" "," nm_text "${nm_text}")
string(REPLACE "\n" ";" nm_lines "${nm_text}")
set(leaked ${nm_lines})
list(FILTER leaked INCLUDE REGEX "npu::emu::|EmulatorKernel|npu_emu_|npu::Model")
if(leaked)
  list(LENGTH leaked n_leaked)
  list(SUBLIST leaked 0 10 first_leaked)
  string(JOIN "\n" first_leaked ${first_leaked})
  message(FATAL_ERROR "${libnpu_archive}: ${n_leaked} emulator/runtime symbols in libnpu, "
                      "e.g.\n${first_leaked}")
endif()
set(defined ${nm_lines})
list(FILTER defined INCLUDE REGEX "^[0-9a-f]+ T npu::")
list(LENGTH defined n_defined)
message(STATUS "nm ${libnpu_archive}: ${n_defined} npu:: functions defined, none of the "
               "emulator (npu::emu::, EmulatorKernel, npu_emu_) or the runtime (npu::Model)")

file(GLOB_RECURSE config_files ${prefix}/*/npuConfig.cmake)
file(GLOB_RECURSE pc_files ${prefix}/*/npu.pc)
file(GLOB_RECURSE emu_pc_files ${prefix}/*/npu-emu.pc)
if(NOT config_files OR NOT pc_files OR NOT emu_pc_files)
  message(FATAL_ERROR "npuConfig.cmake, npu.pc or npu-emu.pc not installed under ${prefix}")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)

# 2. CMake consumer
set(flags "")
if(NPU_SANITIZE)
  set(flags "-fsanitize=${NPU_SANITIZE}")
endif()
set(consumer_build ${WORK_DIR}/consumer-build)
set(gen_args "")
if(CMAKE_GENERATOR)
  set(gen_args -G "${CMAKE_GENERATOR}")
endif()
run(COMMAND ${CMAKE_COMMAND} -S ${NPU_SOURCE_DIR}/tests/package/consumer -B ${consumer_build}
            ${gen_args} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
            -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
            "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_C_FLAGS=${flags}"
            "-DCMAKE_EXE_LINKER_FLAGS=${flags}")
run(COMMAND ${CMAKE_COMMAND} --build ${consumer_build} -j 2)
run(COMMAND ${consumer_build}/consumer_main)
run(COMMAND ${consumer_build}/consumer_driver_only)
message(STATUS "${RUN_OUTPUT}")
run(COMMAND ${consumer_build}/consumer_compile)
message(STATUS "${RUN_OUTPUT}")
run(COMMAND ${consumer_build}/consumer_mock_test)

# 3. pkg-config consumer (C)
find_program(PKG_CONFIG pkg-config REQUIRED)
set(pc_env "PKG_CONFIG_PATH=${pc_dir}")
run(COMMAND ${PKG_CONFIG} --cflags --static --libs npu-emu ENV ${pc_env})
string(STRIP "${RUN_OUTPUT}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER cc)
endif()
separate_arguments(sanitize_flags UNIX_COMMAND "${flags}")
run(COMMAND ${CMAKE_C_COMPILER} -std=c11 ${sanitize_flags} ${NPU_SOURCE_DIR}/tests/package/consumer/main.c
            -o ${WORK_DIR}/c_consumer ${pc_flags})
run(COMMAND ${WORK_DIR}/c_consumer)
message(STATUS "${RUN_OUTPUT}")

# 4. installed tools
run(COMMAND ${prefix}/bin/npu-info)
run(COMMAND ${prefix}/bin/npu-submit --help)
# 5. the Python module
if(NPU_PYTHON)
  file(GLOB_RECURSE py_inits ${prefix}/__init__.py)
  list(FILTER py_inits INCLUDE REGEX "/npu/__init__.py$")
  if(NOT py_inits)
    message(FATAL_ERROR "the Python package npu is not installed under ${prefix}")
  endif()
  list(GET py_inits 0 py_init)
  get_filename_component(py_pkg ${py_init} DIRECTORY)
  get_filename_component(py_site ${py_pkg} DIRECTORY)
  # (No ';' in the code: CMake would split the argument there.)
  run(COMMAND ${NPU_PYTHON} -c
              "import numpy as np
import npu
assert npu.__file__.startswith('${py_site}'), npu.__file__
code = npu.assemble(open('${NPU_SOURCE_DIR}/examples/dma_copy.npuasm').read())
r = npu.Device().submit(code, {0x100000000: np.ones(16, np.float32), 0x100100000: 144})
assert np.frombuffer(r.outputs[0x100100000], np.float32).sum() == 16
print('python:', npu.__file__, r.cycles, 'cycles')
"
      ENV "PYTHONPATH=${py_site}")
  message(STATUS "${RUN_OUTPUT}")
endif()
message(STATUS "package test passed")
