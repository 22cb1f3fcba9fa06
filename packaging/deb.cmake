# deb.cmake - what `cmake --install` puts where, and the Debian package
# that `make deb` builds from it with CPack (README "Installing the Debian
# package"). Included from CMakeLists.txt. Debian's layout, under the
# install prefix (/usr in the package, /usr/local by hand):
#   bin/parqd                           the binary (stripped in the package)
#   share/man/man8/parqd.8.gz           docs/parqd.8.scd, by scdoc at build time
#   share/doc/parqd/                    README.md, copyright, changelog.gz
#   /lib/systemd/system/parqd.service   systemd/, with /usr/local/ in the
#   /lib/systemd/system/parqd.socket      units replaced by the prefix
#   /etc/parqd/parqd.yaml               conf/parqd.yaml         (conffiles)
#   /etc/parqd/schemas/*.yaml           conf/schemas/: parqd.yaml's schema:
#                                       is relative to /etc/parqd
# Nothing goes to /var/lib: systemd creates the state directory
# (StateDirectory=parqd) when the service starts, and it stays on purge.
# The maintainer scripts (packaging/postinst, prerm, postrm) only tell a
# running systemd about the units and stop or restart the service.

# ---- the man page: scdoc, when installed (`make deb` installs it) ---------
find_program(SCDOC scdoc)
set(PQ_MAN ${CMAKE_BINARY_DIR}/packaging/parqd.8.gz)
if(SCDOC)
  add_custom_command(OUTPUT ${PQ_MAN}
    COMMAND ${CMAKE_COMMAND} -DSCDOC=${SCDOC} -DIN=${CMAKE_SOURCE_DIR}/docs/parqd.8.scd
            -DOUT=${PQ_MAN} -P ${CMAKE_SOURCE_DIR}/packaging/gz.cmake
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/parqd.8.scd ${CMAKE_SOURCE_DIR}/packaging/gz.cmake
    COMMENT "parqd(8): docs/parqd.8.scd -> parqd.8.gz (scdoc)")
  add_custom_target(manpage ALL DEPENDS ${PQ_MAN})
  install(FILES ${PQ_MAN} DESTINATION share/man/man8)
else()
  message(STATUS "scdoc not found: no parqd(8) man page (make deb installs scdoc)")
endif()

# ---- documentation ----------------------------------------------------------
set(PQ_CHANGELOG ${CMAKE_BINARY_DIR}/packaging/changelog)
configure_file(${CMAKE_SOURCE_DIR}/packaging/changelog.in ${PQ_CHANGELOG} @ONLY)
add_custom_command(OUTPUT ${PQ_CHANGELOG}.gz
  COMMAND ${CMAKE_COMMAND} -DIN=${PQ_CHANGELOG} -DOUT=${PQ_CHANGELOG}.gz
          -P ${CMAKE_SOURCE_DIR}/packaging/gz.cmake
  DEPENDS ${PQ_CHANGELOG} ${CMAKE_SOURCE_DIR}/packaging/gz.cmake)
add_custom_target(changelog ALL DEPENDS ${PQ_CHANGELOG}.gz)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/packaging/copyright
              ${PQ_CHANGELOG}.gz
        DESTINATION share/doc/parqd)

# ---- binary, units, configuration ------------------------------------------
install(TARGETS parqd RUNTIME DESTINATION bin)
# The units name /usr/local/bin/parqd (a hand install); at install time
# they get the prefix actually used (/usr for the package).
install(CODE "
  foreach(unit parqd.service parqd.socket)
    file(READ \"${CMAKE_SOURCE_DIR}/systemd/\${unit}\" text)
    string(REPLACE \"/usr/local/\" \"\${CMAKE_INSTALL_PREFIX}/\" text \"\${text}\")
    file(WRITE \"${CMAKE_BINARY_DIR}/packaging/\${unit}\" \"\${text}\")
  endforeach()")
install(FILES ${CMAKE_BINARY_DIR}/packaging/parqd.service ${CMAKE_BINARY_DIR}/packaging/parqd.socket
        DESTINATION /lib/systemd/system)
install(FILES ${CMAKE_SOURCE_DIR}/conf/parqd.yaml DESTINATION /etc/parqd)
file(GLOB PQ_SCHEMAS ${CMAKE_SOURCE_DIR}/conf/schemas/*.yaml)
install(FILES ${PQ_SCHEMAS} DESTINATION /etc/parqd/schemas)

# dpkg keeps an operator's edits of these across upgrades (conffiles).
set(PQ_CONFFILES "/etc/parqd/parqd.yaml\n")
foreach(f ${PQ_SCHEMAS})
  get_filename_component(name ${f} NAME)
  string(APPEND PQ_CONFFILES "/etc/parqd/schemas/${name}\n")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/packaging/conffiles "${PQ_CONFFILES}")

# ---- the package ------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME parqd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "daemon that lands NDJSON logs as Apache Parquet files")
# The extended description (CPack indents it; the synopsis is the summary).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "parqd receives newline-delimited JSON records over TCP (optionally TLS)
and Unix sockets, spools them to disk, and writes them to Apache Parquet
files with typed columns from a YAML schema and lossless Variant columns,
bloom filters, page indexes and optional modular encryption. Files appear
only when complete. Includes systemd units, an example configuration and
example schemas; parqd convert turns NDJSON files into Parquet in batch.")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "parqd maintainers <maintainers@users.noreply.a-seed-cd43968a.example>")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_BINARY_DIR}/packaging/conffiles;${CMAKE_SOURCE_DIR}/packaging/postinst;${CMAKE_SOURCE_DIR}/packaging/prerm;${CMAKE_SOURCE_DIR}/packaging/postrm")
include(CPack)

# test_deb_install runs the packaged configuration, which listens on the
# fixed ports 5170 and 9170, as does test_daemon_idle's `make run` part.
if(PQ_TESTS AND TEST test_deb_install AND TEST test_daemon_idle)
  set_tests_properties(test_deb_install test_daemon_idle PROPERTIES RESOURCE_LOCK parqd_ports_5170_9170)
endif()
