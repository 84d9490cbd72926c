# Ferry: build, demo, tests and benchmarks. `make demo` and `make test` install what they need.

CARGO   ?= cargo
FERRY   := target/release/ferry
LIBDIR  := lib
BUILD   := build
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# System packages: a C compiler for the MPI programs; MPICH and Open MPI for the ABI check,
# the Hydra launch test and the side-by-side benchmarks; python3 for the hostile-peer test;
# iproute2 and nftables for the emulated clusters (tests/topology.sh); an ssh server and client
# for the ssh launcher across them (tests/clusters.sh); Slurm and munge for the srun launch
# test (tests/slurm.sh); g++, gfortran, autoconf, automake and pkg-config for the wrapper,
# install and Fortran tests (tests/wrappers.sh, tests/install.sh, tests/fortran.sh); NetPIPE's
# MPICH build, a Debian package that must run on Ferry's library (tests/abi/packages.sh);
# python3's venv and headers to build mpi4py for its test suite (tests/mpi4py.sh).
DEMO_PKGS := gcc make
TEST_PKGS := gcc g++ gfortran autoconf automake pkg-config make python3 python3-venv python3-dev mpich libmpich-dev openmpi-bin libopenmpi-dev iproute2 nftables openssh-server openssh-client slurm-wlm munge netpipe-mpich2

.PHONY: all build fortran install demo test test-long bench bench-scripts bench-mcapi bench-clusters deps-demo deps-test clean

all: build

define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

deps-demo:
	$(call apt_install,$(DEMO_PKGS))

deps-test:
	$(call apt_install,$(TEST_PKGS))

build:
	$(CARGO) build --release --workspace
	@mkdir -p $(LIBDIR)
	@# Replace by rename: rewriting a library in place crashes programs that have it mapped.
	@cp -f target/release/libmpi.so $(LIBDIR)/.libmpi.so.12.new && mv -f $(LIBDIR)/.libmpi.so.12.new $(LIBDIR)/libmpi.so.12
	@ln -sf libmpi.so.12 $(LIBDIR)/libmpi.so
	@ln -sf libmpi.so.12 $(LIBDIR)/libmpich.so.12
	@ln -sf libmpi.so.12 $(LIBDIR)/libmpich.so
	@cp -f target/release/libmcapi.so $(LIBDIR)/.libmcapi.so.new && mv -f $(LIBDIR)/.libmcapi.so.new $(LIBDIR)/libmcapi.so
	@$(MAKE) --no-print-directory fortran

# The Fortran bindings (crates/ferry-fortran): C wrappers generated from the C header by
# ferry-fortran-gen, built into libmpifort.so.12 (also under MPICH's name libmpichfort.so.12)
# over libmpi (found beside it: $ORIGIN); and the `mpi` module, include/mpi.mod (mpif.h and
# the generated interfaces), built by gfortran when there is one.
FORTRAN_SRC := crates/ferry-fortran
FORTRAN_GEN := target/release/ferry-fortran-gen
GFORTRAN    ?= gfortran
C_HEADERS   := include/mpi.h include/ferry_mpi_functions.h include/ferry_pmpi_functions.h

fortran: $(LIBDIR)/libmpifort.so.12
	@if command -v $(GFORTRAN) >/dev/null 2>&1; then $(MAKE) -q include/mpi.mod || $(MAKE) --no-print-directory include/mpi.mod; \
	else echo "note: no $(GFORTRAN): include/mpi.mod not built (mpif.h and libmpifort are)"; fi

$(BUILD)/fortran/bindings.c: $(FORTRAN_GEN) $(C_HEADERS)
	@mkdir -p $(@D)
	$(FORTRAN_GEN) include/ferry_mpi_functions.h include/ferry_pmpi_functions.h $@ $(BUILD)/fortran/mpi_interfaces.f90

$(BUILD)/fortran/mpi_interfaces.f90: $(BUILD)/fortran/bindings.c

$(LIBDIR)/libmpifort.so.12: $(BUILD)/fortran/bindings.c $(wildcard $(FORTRAN_SRC)/c/*) $(C_HEADERS) | $(LIBDIR)/libmpi.so.12
	$(CC) -O2 -g -Wall -fPIC -shared -Iinclude -I$(FORTRAN_SRC)/c -o $(LIBDIR)/.libmpifort.so.12.new \
	  $(BUILD)/fortran/bindings.c $(FORTRAN_SRC)/c/*.c -L$(LIBDIR) -lmpi -Wl,-soname,libmpifort.so.12 -Wl,-rpath,'$$ORIGIN' -Wl,-z,defs
	@mv -f $(LIBDIR)/.libmpifort.so.12.new $@
	@for l in libmpifort.so libmpichfort.so.12 libmpichfort.so; do ln -sf libmpifort.so.12 $(LIBDIR)/$$l; done

include/mpi.mod: $(FORTRAN_SRC)/fortran/mpi.f90 include/mpif.h $(BUILD)/fortran/mpi_interfaces.f90
	$(GFORTRAN) -c -Iinclude -I$(BUILD)/fortran -J$(BUILD)/fortran -o $(BUILD)/fortran/mpi.o $<
	@cp -f $(BUILD)/fortran/mpi.mod include/.mpi.mod.new && mv -f include/.mpi.mod.new $@

# Everything a user needs under PREFIX: the wrappers find include/ and lib/ from their own
# place, `ferry bench` finds share/ferry/bench from its own, and pkg-config finds Ferry as
# ferry-mpi, mpich or mpi (PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig outside the usual prefixes).
install: build
	install -d "$(PREFIX)/bin" "$(PREFIX)/lib/pkgconfig" "$(PREFIX)/include" "$(PREFIX)/share/ferry/bench"
	install -m 755 $(FERRY) bin/mpicc bin/mpiexec bin/mpirun "$(PREFIX)/bin/"
	for w in mpicxx mpic++ mpifort mpif77 mpif90 mcapicc; do ln -sfn mpicc "$(PREFIX)/bin/$$w"; done
	@# Replace by rename, as in build: programs may have the old library mapped.
	install -m 755 target/release/libmpi.so "$(PREFIX)/lib/.libmpi.so.12.new"
	mv -f "$(PREFIX)/lib/.libmpi.so.12.new" "$(PREFIX)/lib/libmpi.so.12"
	install -m 755 target/release/libmcapi.so "$(PREFIX)/lib/.libmcapi.so.new"
	mv -f "$(PREFIX)/lib/.libmcapi.so.new" "$(PREFIX)/lib/libmcapi.so"
	for l in libmpi.so libmpich.so.12 libmpich.so; do ln -sfn libmpi.so.12 "$(PREFIX)/lib/$$l"; done
	install -m 755 $(LIBDIR)/libmpifort.so.12 "$(PREFIX)/lib/.libmpifort.so.12.new"
	mv -f "$(PREFIX)/lib/.libmpifort.so.12.new" "$(PREFIX)/lib/libmpifort.so.12"
	for l in libmpifort.so libmpichfort.so.12 libmpichfort.so; do ln -sfn libmpifort.so.12 "$(PREFIX)/lib/$$l"; done
	install -m 644 include/mpi.h include/ferry_mpi_functions.h include/ferry_pmpi_functions.h include/ferry_mpi_large_count.h include/ferry_mpi_io.h include/mpif.h include/mcapi.h include/mca.h "$(PREFIX)/include/"
	if [ -f include/mpi.mod ]; then install -m 644 include/mpi.mod "$(PREFIX)/include/"; fi
	install -m 644 bench/*.c bench/*.h "$(PREFIX)/share/ferry/bench/"
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' pkgconfig/ferry-mpi.pc.in > "$(PREFIX)/lib/pkgconfig/ferry-mpi.pc"
	for pc in mpich.pc mpi.pc; do ln -sfn ferry-mpi.pc "$(PREFIX)/lib/pkgconfig/$$pc"; done

$(BUILD)/examples/%: examples/%.c include/mpi.h build
	@mkdir -p $(BUILD)/examples
	bin/mpicc -O2 -Wall -o $@ $<

$(BUILD)/examples/mcapi_%: examples/mcapi_%.c include/mcapi.h build
	@mkdir -p $(BUILD)/examples
	bin/mcapicc -O2 -Wall -o $@ $<

demo: deps-demo build $(BUILD)/examples/ring $(BUILD)/examples/halo $(BUILD)/examples/mcapi_pipeline
	@echo "== ring: a token travels around 4 ranks =="
	$(FERRY) run -n 4 --timeout 60 $(BUILD)/examples/ring
	@echo
	@echo "== halo: 1-D halo exchange and Jacobi sweeps on 4 ranks =="
	$(FERRY) run -n 4 --timeout 60 $(BUILD)/examples/halo
	@echo
	@echo "== mcapi_pipeline: 3 MCAPI nodes, a packet channel, a scalar channel and a message =="
	$(FERRY) run -n 3 --timeout 60 $(BUILD)/examples/mcapi_pipeline

test: deps-test build
	$(CARGO) test --release --workspace
	bash tests/check-purity.sh
	bash tests/check-layers.sh
	bash tests/check-mpi-layers.sh --strict
	bash tests/abi/check.sh
	bash tests/abi/symbols.sh
	bash tests/abi/fortran.sh
	bash tests/fortran.sh
	bash tests/abi/packages.sh
	bash tests/wrappers.sh
	bash tests/install.sh
	bash tests/mcapi/abi/check.sh
	bash tests/run-c-tests.sh
	bash tests/dead-peer.sh
	bash tests/dynamic.sh
	bash tests/spawn.sh
	bash tests/shm.sh
	$(SUDO) bash tests/topology-check.sh
	$(SUDO) bash tests/clusters.sh
	$(SUDO) bash tests/slurm.sh
	$(SUDO) bash tests/hydra-hosts.sh
	bash tests/hostile-peers.sh
	bash tests/fit.sh
	bash tests/bench-quick.sh
	bash tests/tune-quick.sh
	bash tests/mcapi.sh
	bash tests/mcapi-bench-quick.sh
	bash tests/mpi4py.sh -q -n "1 2"
	bash tests/mpi4py.sh -q -n "1 2" -b mpich

test-long: test
	bash tests/fuzz.sh
	bash tests/mpi4py.sh
	bash tests/mpi4py.sh -b mpich

# Every benchmark program under Ferry, MPICH and Open MPI side by side (`ferry bench --help`):
# results in $(BUILD)/bench/results, figures and summary.md in $(BUILD)/bench/report.
bench: deps-test build
	$(FERRY) bench --plot $(BUILD)/bench/report

# The S4 evaluation of the MCAPI library (docs/mcapi.md): MCAPI on shared memory and TCP beside
# a raw TCP socket, memcpy and Ferry's MPI; tables in $(BUILD)/bench-mcapi/summary.txt.
# `bash bench/mcapi.sh -q` is a quick run.
bench-mcapi: deps-test build
	bash bench/mcapi.sh -o $(BUILD)/bench-mcapi

# S5's evaluation on the emulated clusters (root): bandwidth, latency, barrier and alltoall,
# direct vs through NAT vs through a relay; tables in $(BUILD)/bench-clusters/summary.md.
# `bash bench/clusters.sh -q` is a quick run, `-d MS` adds a WAN delay (needs sch_netem).
bench-clusters: deps-test build
	$(SUDO) bash bench/clusters.sh -o $(BUILD)/bench-clusters

# The shell drivers that came before `ferry bench`: TCP and shared-memory point-to-point,
# the overlap benchmark, collectives and Ferry's allgather algorithms.
bench-scripts: deps-test build
	bash bench/run.sh -t shm -o $(BUILD)/bench-shm
	bash bench/run.sh -t tcp -o $(BUILD)/bench-tcp
	bash bench/overlap.sh -o $(BUILD)/bench-overlap
	bash bench/coll.sh -o $(BUILD)/bench-coll -X mpich:over
	bash bench/coll.sh -o $(BUILD)/bench-coll-allgather -A allgather:ring,double_ring,bruck,double_bruck

clean:
	$(CARGO) clean
	rm -rf $(LIBDIR) $(BUILD) include/mpi.mod
