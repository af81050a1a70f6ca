# `mpirun -n RANKS ringmm apsp --summa` against `ringmm apsp` on the CPU with the same block: the
# distance and successor files must be byte for byte the same, --route must print the same line,
# the default grid is taller than wide, and a failing run (a negative cycle) must exit 1 on every
# rank and write nothing.
# cmake -DRINGMM=... -DMPIEXEC=... -DRANKS=N -DGRAPH=... -DWORK=... -P apsp_summa_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(mpirun ${MPIEXEC} -n ${RANKS} --oversubscribe)

include(${CMAKE_CURRENT_LIST_DIR}/run_tool.cmake)

function(route_line text output_var)
  string(REGEX MATCH "route     [^\n]*" line "${text}")
  if(line STREQUAL "")
    message(FATAL_ERROR "no route printed:\n${text}")
  endif()
  set(${output_var} "${line}" PARENT_SCOPE)
endfunction()

foreach(block 1 5 16)
  run_tool(0 one ${RINGMM} apsp ${GRAPH} --backend cpu --block ${block} --out ${WORK}/one_d.npy --next ${WORK}/one_n.npy
           --route 2 30)
  run_tool(0 many ${mpirun} ${RINGMM} apsp ${GRAPH} --summa --block ${block} --out ${WORK}/many_d.npy
           --next ${WORK}/many_n.npy --route 2 30)
  foreach(file d n)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/one_${file}.npy ${WORK}/many_${file}.npy
                    RESULT_VARIABLE differ)
    if(differ)
      message(FATAL_ERROR "block ${block}: ${file} differs between ringmm apsp and ${RANKS} ranks with --summa")
    endif()
  endforeach()
  route_line("${one}" one_route)
  route_line("${many}" many_route)
  if(NOT one_route STREQUAL many_route)
    message(FATAL_ERROR "block ${block}: '${one_route}' on one process, '${many_route}' with --summa")
  endif()
endforeach()

# The default grid is the near-square one turned taller than wide.
set(tall_1 1x1)
set(tall_3 3x1)
set(tall_4 2x2)
if(NOT many MATCHES "grid      ${tall_${RANKS}},")
  message(FATAL_ERROR "${RANKS} ranks: not the ${tall_${RANKS}} grid by default:\n${many}")
endif()

# A negative cycle 0 -> 1 -> 2 -> 0: an error that names its vertices, and no output files.
file(WRITE ${WORK}/cycle.mtx "%%MatrixMarket matrix coordinate integer general\n5 5 4\n1 2 1\n2 3 1\n3 1 -3\n4 5 2\n")
run_tool(1 failed ${mpirun} ${RINGMM} apsp ${WORK}/cycle.mtx --summa --block 2 --out ${WORK}/cycle_d.npy
         --next ${WORK}/cycle_n.npy)
if(NOT failed MATCHES "negative cycle: .* 0, 1, 2")
  message(FATAL_ERROR "the negative cycle was not reported:\n${failed}")
endif()
if(EXISTS ${WORK}/cycle_d.npy OR EXISTS ${WORK}/cycle_n.npy)
  message(FATAL_ERROR "a failed run wrote its outputs")
endif()
