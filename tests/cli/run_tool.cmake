# run_tool(expected_rc output_var command...): runs the command, fails the test unless it exits
# with expected_rc, and returns its stdout and stderr together. Shared by the CLI test scripts.
function(run_tool expected_rc output_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expected_rc)
    message(FATAL_ERROR "exit status ${rc}, expected ${expected_rc}: ${ARGN}\n${out}\n${err}")
  endif()
  set(${output_var} "${out}${err}" PARENT_SCOPE)
endfunction()
