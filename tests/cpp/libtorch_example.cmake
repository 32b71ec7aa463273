# ctest driver for examples/libtorch: install the build tree into a fresh prefix, build the example against it and
# against the LibTorch inside the torch wheel of PYTHON, make its models with scripts/make_models.py, run it.
# Prints "SKIPPED: ..." (the test's skip pattern) when PYTHON has no torch.
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}")
  endif()
  message("${out}")
endfunction()
execute_process(COMMAND "${PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path, end='')"
                RESULT_VARIABLE rc OUTPUT_VARIABLE torch_prefix ERROR_QUIET)
if(NOT rc EQUAL 0)
  message("SKIPPED: torch is not installed for ${PYTHON} (LibTorch comes from the torch wheel)")
  return()
endif()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
set(ENV{CMAKE_PREFIX_PATH} "${torch_prefix}")  # (a second prefix on the command line would split at the ';')
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/libtorch" -B "${WORK_DIR}/build" -G Ninja -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-Donnxruntime_ROOT=${ORT_ROOT}"
    "-DDLPACK_INCLUDE_DIR=${DLPACK_INCLUDE_DIR}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${PYTHON}" "${SOURCE_DIR}/scripts/make_models.py" "${WORK_DIR}/models" feature head)
run("${WORK_DIR}/build/libtorch_pipeline" "${WORK_DIR}/models/feature.onnx" "${WORK_DIR}/models/head.onnx")
