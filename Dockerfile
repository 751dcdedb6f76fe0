# The gpushare image, built where a registry and a Debian mirror are at hand
# (docs/guide/helm.md, "The image"):
#   docker build -t registry.example.com/gpushare:0.1.0 .
#   buildah bud -t registry.example.com/gpushare:0.1.0 .
# `make image` builds the same image here without pulling anything: the
# binary and the libraries of this machine, from scratch.

# Build stage: the build dependencies of scripts/deps.sh, test tools aside.
FROM debian:bookworm-slim AS build
RUN apt-get update \
	&& apt-get install -y --no-install-recommends \
		build-essential pkg-config \
		libyaml-dev libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev \
	&& rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" all && ./build/gpushare version

# Run stage: the run-time libraries only. libcurl4 is not linked but
# dlopen()ed on the first API request (src/kube/curlapi.c), so no tool that
# reads the ELF would find it: it is named here. ca-certificates: a
# kubeconfig without a CA trusts the system's, as kubectl does.
FROM debian:bookworm-slim
RUN apt-get update \
	&& apt-get install -y --no-install-recommends \
		libyaml-0-2 libjansson4 libmicrohttpd12 libcurl4 ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/gpushare /usr/bin/gpushare
# The non-root user the chart runs it as (podSecurityContext).
USER 65532:65532
ENTRYPOINT ["/usr/bin/gpushare"]
CMD ["version"]
