# `mpirun -n RANKS ringmm summa --argmax --check`: the distributed argmax's C and K* against the
# single-process argmax (the tool's --check compares both, and exits 1 on a difference), on odd
# shapes, transposed operands, a general α, both variants; the --results record names the product,
# the residence and the variant `--variant auto` (the default) chose: ring on 2 ranks (one hop per
# panel), broadcast on 3; the CPU's default block; and a semiring whose ⊕ does not select is
# refused with exit status 2, naming --argmax.
# cmake -DRINGMM=... -DMPIEXEC=... -DRANKS=N -P summa_argmax_test.cmake
cmake_policy(SET CMP0007 NEW)
set(mpirun ${MPIEXEC} -n ${RANKS} --oversubscribe)

include(${CMAKE_CURRENT_LIST_DIR}/run_tool.cmake)

foreach(run "max-plus;f32;129,33,77;8;broadcast"
            "min-plus;i32;7,130,33;5;ring;--transa"
            "max-min;i32;33,33,200;16;ring;--alpha;5"
            "max-times;f32;64,65,66;7;broadcast;--transb")
  list(POP_FRONT run semiring type size block variant)
  run_tool(0 out ${mpirun} ${RINGMM} summa --argmax --check --reps 1 --backend cpu --threads 1 --semiring ${semiring}
           --type ${type} --size ${size} --block ${block} --variant ${variant} ${run})
  if(NOT out MATCHES "with the argmax" OR NOT out MATCHES "check     PASS")
    message(FATAL_ERROR "${semiring} ${type} ${size}: no passing argmax check:\n${out}")
  endif()
endforeach()

file(REMOVE ${WORK_RECORD})
run_tool(0 recorded ${mpirun} ${RINGMM} summa --argmax --semiring max-plus --reps 1 --backend cpu --threads 1 --size 20 --block 4
         --results ${WORK_RECORD})
file(READ ${WORK_RECORD} record)
if(RANKS LESS_EQUAL 2)
  set(chosen ring)
else()
  set(chosen broadcast)
endif()
if(NOT recorded MATCHES "variant ${chosen},")
  message(FATAL_ERROR "--variant auto on ${RANKS} ranks did not print the ${chosen} variant:\n${recorded}")
endif()
foreach(field "\"product\": \"argmax\"" "\"resident\": false" "\"distribution_seconds\": 0" "\"variant\": \"${chosen}\"")
  string(FIND "${record}" "${field}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the record lacks ${field}:\n${record}")
  endif()
endforeach()

# Without --block the panels are 256 wide on the CPU (1024 on GPUs).
run_tool(0 plain ${mpirun} ${RINGMM} summa --semiring max-plus --reps 1 --backend cpu --threads 1 --size 20)
if(NOT plain MATCHES ", block 256, variant ${chosen},")
  message(FATAL_ERROR "the CPU's default block is not 256:\n${plain}")
endif()

run_tool(2 refused ${mpirun} ${RINGMM} summa --argmax --semiring plus-times --size 16 --backend cpu)
if(NOT refused MATCHES "--argmax: plus-times's")
  message(FATAL_ERROR "plus-times with --argmax was not refused by name:\n${refused}")
endif()
