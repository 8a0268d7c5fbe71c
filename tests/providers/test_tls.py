"""The shared TLS context: httpx's default one, its trust store read only when
a connection needs it, and always before any connection is made with it."""

from __future__ import annotations

import socket
import ssl

import httpx

from core.providers.tls import TrustStoreOnFirstUse, needs_trust_store


def settings(context: ssl.SSLContext) -> dict[str, object]:
    return {
        "verify_mode": context.verify_mode,
        "check_hostname": context.check_hostname,
        "verify_flags": context.verify_flags,
        "options": context.options,
        "minimum_version": context.minimum_version,
        "maximum_version": context.maximum_version,
    }


def test_it_verifies_as_httpx_default_context_does_and_trusts_the_same_certificates():
    context = TrustStoreOnFirstUse()
    default = httpx.create_ssl_context()
    assert settings(context) == settings(default)
    assert context.cert_store_stats()["x509_ca"] == 0  # nothing read when made
    context.load_trust_store()
    assert context.cert_store_stats() == default.cert_store_stats()


def test_a_tls_connection_reads_the_trust_store_before_it_starts():
    """A plain-http server that redirects to https, or a proxy spoken to over
    TLS: no handshake is made with an empty trust store (httpx's async
    connections wrap a BIO, its sync ones a socket)."""
    over_bio = TrustStoreOnFirstUse()
    over_bio.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.com")
    over_socket = TrustStoreOnFirstUse()
    with socket.socket() as plain:
        over_socket.wrap_socket(
            plain, server_hostname="example.com", do_handshake_on_connect=False
        ).close()
    for context in (over_bio, over_socket):
        assert context.trust_store_loaded
        assert context.cert_store_stats()["x509_ca"] > 0


def test_only_plain_http_goes_without_it():
    assert not needs_trust_store("http://127.0.0.1:8080/v1")
    assert not needs_trust_store("HTTP://localhost:11434")
    assert needs_trust_store("https://api.openai.com/v1")
