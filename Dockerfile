FROM debian:12
WORKDIR /kvrocks
COPY . .
RUN scripts/deps.sh && scripts/build.sh && mkdir -p /data
EXPOSE 6666
CMD ["build/kvrocks", "--conf", "kvrocks.conf", "--bind", "0.0.0.0", "--dir", "/data"]
