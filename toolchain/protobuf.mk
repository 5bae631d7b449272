# protobuf-c's runtime (issue 17: `offcpu report --pprof`), built by
# toolchain/protobuf.sh beside the toolchain and stamped on its own.  The
# build host's protoc-c (toolchain/deps.sh) generates the code; bookworm's
# compiler and this runtime are the same release.
PROTOBUF_C_VERSION := 1.4.1
LIB_VERSIONS       := $(LIB_VERSIONS), protobuf-c $(PROTOBUF_C_VERSION)
