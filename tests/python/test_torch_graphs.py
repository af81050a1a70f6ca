"""ringmm's products on torch tensors captured in a CUDA graph (torch.cuda.graph) and replayed: the
replay gives the direct calls' results on the data the tensors hold at replay. A product that checks
its inputs on the device (log_plus, max_times, the integer pairs) waits for the verdict, which a
capture cannot: it is refused with an error naming the setting. Needs torch with a CUDA device and
ringmm's CUDA backend."""

import pytest

torch = pytest.importorskip("torch", reason="needs torch")
import ringmm  # noqa: E402
import ringmm.torch  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (torch.cuda.is_available() and bool(ringmm.info()["cuda_devices"])),
    reason="needs torch with a CUDA device and ringmm's CUDA backend")


def fill(*tensors, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    for t in tensors:
        t.copy_(torch.randn(t.shape, generator=g, device="cuda", dtype=t.dtype))


def products(a, b, x, y):
    """One step of each kind: ringmm.matmul, its argmax, a batch, and ringmm.torch's differentiable op."""
    c = ringmm.matmul(a, b, "max_plus")
    d, k_star = ringmm.matmul(a, b, "min_plus", return_argmax=True)
    e = ringmm.matmul(x, y, "max_min")
    f = ringmm.torch.matmul(c, b.T, "min_max")
    return c, d, k_star, e, f


def test_a_captured_sequence_replays_the_direct_results():
    a = torch.empty(129, 33, device="cuda")
    b = torch.empty(33, 127, device="cuda")
    x = torch.empty(8, 65, 17, device="cuda")
    y = torch.empty(8, 17, 31, device="cuda")
    fill(a, b, x, y, seed=1)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside the capture, as torch asks
        products(a, b, x, y)
    torch.cuda.current_stream().wait_stream(stream)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = products(a, b, x, y)

    for seed in (2, 3):
        fill(a, b, x, y, seed=seed)
        want = products(a, b, x, y)
        for t in captured:
            t.fill_(-1)
        graph.replay()
        torch.cuda.synchronize()
        for got, expected in zip(captured, want):
            assert torch.equal(got, expected)


@pytest.mark.parametrize("semiring", ["log_plus", "max_times"])
def test_a_product_that_checks_its_inputs_is_refused_in_a_capture(semiring):
    a = torch.rand(16, 8, device="cuda")
    b = torch.rand(8, 4, device="cuda")
    ringmm.matmul(a, b, semiring)  # outside a capture it runs
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(Exception, match="capturing a CUDA graph"):
        with torch.cuda.graph(graph):
            ringmm.matmul(a, b, semiring)
    torch.cuda.synchronize()


def test_trusted_inputs_let_a_checked_product_be_captured():
    a = torch.rand(33, 17, device="cuda")
    b = torch.rand(17, 65, device="cuda")
    want = ringmm.matmul(a, b, "log_plus")
    ringmm.matmul(a, b, "log_plus", trust_inputs=True)  # warm-up
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = ringmm.matmul(a, b, "log_plus", trust_inputs=True)
    got.fill_(0)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(got, want)


def test_trusted_inputs_let_a_differentiable_log_plus_product_be_captured():
    a = torch.rand(33, 17, device="cuda")
    b = torch.rand(17, 65, device="cuda")
    want = ringmm.torch.matmul(a, b, "log_plus")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside the capture
        ringmm.torch.matmul(a, b, "log_plus", trust_inputs=True)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = ringmm.torch.matmul(a, b, "log_plus", trust_inputs=True)
    got.fill_(0)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(got, want)
