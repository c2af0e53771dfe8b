"""A tiny OTLP/HTTP receiver on 127.0.0.1: POST /v1/traces and /v1/metrics with a bearer token."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as it arrived: ids, name and attributes decoded from the protobuf."""

    name: str
    span_id: bytes
    parent_span_id: bytes
    trace_id: bytes
    attributes: dict[str, object]
    status_code: int
    service: str


@dataclass(frozen=True)
class ReceivedPoint:
    """One histogram data point as it arrived, with its metric's name and unit."""

    metric: str
    unit: str
    attributes: dict[str, object]
    count: int
    sum: float
    explicit_bounds: tuple[float, ...]
    service: str


@dataclass
class Received:
    """What the receiver took in, and what it refused."""

    url: str
    token: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    points: list[ReceivedPoint] = field(default_factory=list)
    """Histogram points, from every export (a cumulative metric repeats its totals)."""
    refused: int = 0


@contextmanager
def otlp_receiver(token: str) -> Iterator[Received]:
    """Serve until the block ends; requests without `Authorization: Bearer <token>` get 401."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            known = self.path in {"/v1/traces", "/v1/metrics"}
            if not known or self.headers.get("Authorization") != f"Bearer {token}":
                with lock:
                    received.refused += 1
                self.send_response(401 if known else 404)
                self.end_headers()
                return
            if self.path == "/v1/traces":
                spans = ExportTraceServiceRequest.FromString(body)
                with lock:
                    received.spans.extend(_spans(spans))
                reply = ExportTraceServiceResponse().SerializeToString()
            else:
                metrics = ExportMetricsServiceRequest.FromString(body)
                with lock:
                    received.points.extend(_points(metrics))
                reply = ExportMetricsServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: object) -> None:
            return  # quiet: the test reads what arrived, not the access log

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    received = Received(url=f"http://127.0.0.1:{server.server_address[1]}", token=token)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _spans(request: ExportTraceServiceRequest) -> Iterator[ReceivedSpan]:
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield ReceivedSpan(
                    name=span.name,
                    span_id=span.span_id,
                    parent_span_id=span.parent_span_id,
                    trace_id=span.trace_id,
                    attributes={a.key: _value(a.value) for a in span.attributes},
                    status_code=span.status.code,
                    service=str(resource.get("service.name")),
                )


def _points(request: ExportMetricsServiceRequest) -> Iterator[ReceivedPoint]:
    for resource_metrics in request.resource_metrics:
        resource = {a.key: _value(a.value) for a in resource_metrics.resource.attributes}
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                for point in metric.histogram.data_points:
                    yield ReceivedPoint(
                        metric=metric.name,
                        unit=metric.unit,
                        attributes={a.key: _value(a.value) for a in point.attributes},
                        count=point.count,
                        sum=point.sum,
                        explicit_bounds=tuple(point.explicit_bounds),
                        service=str(resource.get("service.name")),
                    )


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind) if kind is not None else None
