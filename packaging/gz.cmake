# gz.cmake - cmake -DIN=FILE -DOUT=FILE.gz [-DSCDOC=scdoc] -P gz.cmake:
# OUT is IN gzipped the way Debian wants it (-9, no name or time stamp, so
# the bytes are reproducible), after scdoc when SCDOC is given (man pages).
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
set(src ${IN})
if(SCDOC)
  set(src ${OUT}.roff)
  execute_process(COMMAND ${SCDOC} INPUT_FILE ${IN} OUTPUT_FILE ${src} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scdoc could not read ${IN} (exit ${rc})")
  endif()
endif()
execute_process(COMMAND gzip -9nc ${src} OUTPUT_FILE ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${src} failed (exit ${rc})")
endif()
