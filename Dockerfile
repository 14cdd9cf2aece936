# The offset-vault image, for a machine with a Docker engine or BuildKit:
#   docker build -t offset-vault:0.1.0 .
# The same image is built without any container engine, from Debian's packages, by
# `scripts/image build` (the book: "Installing", the container image); both take the files of the
# offset-vault layer from `scripts/image files`, and a test checks that the user, working
# directory, entrypoint and command below are the ones scripts/image gives its image.

# Build stage: the release binary, its completions and man pages.
FROM rust:1.95-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake g++ make perl pkg-config binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
 && scripts/image files --binary target/release/offset-vault --into /out

# Runtime: Debian slim with CA certificates, a user of its own, and nothing else.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 offset-vault \
 && useradd --uid 10001 --gid 10001 --home-dir /var/lib/offset-vault --no-create-home \
      --shell /usr/sbin/nologin --comment offset-vault offset-vault \
 && install -d -m 0750 -o 10001 -g 10001 /var/lib/offset-vault
COPY --from=build /out/ /
LABEL org.opencontainers.image.title="offset-vault" \
      org.opencontainers.image.description="Backups of Kafka consumer-group and connector offsets, restored as a verified offset reset"
USER 10001:10001
WORKDIR /var/lib/offset-vault
ENTRYPOINT ["/usr/local/bin/offset-vault"]
CMD ["--help"]
