FROM debian:12
WORKDIR /kvrocks
COPY . .
RUN scripts/deps.sh && scripts/build.sh && mkdir -p /data
EXPOSE 6666
# As the official redis image: reachable from outside the container without a password.
CMD ["build/kvrocks", "--conf", "kvrocks.conf", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data"]
