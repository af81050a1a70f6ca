"""Train a hidden Markov model in torch through the log semiring with ringmm.torch.

The forward algorithm is a chain of log-plus products, alpha_t = (alpha_{t-1} ⊗ log A) + log E[:, x_t],
with alpha a (sequences × states) matrix and log A the (states × states) log transition matrix:
ringmm.torch.matmul(alpha, log_a, "log_plus") computes it and its gradient, so torch's optimisers fit
the model to data by maximising the log-likelihood. The data come from a random "true" HMM, whose
own log-likelihood is the floor a trained model approaches.

    python examples/python/hmm_torch_training.py [--states 16] [--symbols 32] [--length 64]
        [--sequences 256] [--steps 150] [--device cpu|cuda]
"""

import argparse

import torch

import ringmm.torch


def log_likelihood(logits, x, matmul):
    """Per-sequence log p(x) of int64 symbols x (sequences × length) under the HMM whose unnormalised
    log-parameters are `logits` (initial, transition, emission); `matmul` is the log-plus product."""
    log_initial = logits["initial"].log_softmax(-1)  # (states,)
    log_transition = logits["transition"].log_softmax(-1)  # (states, states): row = from
    log_emission = logits["emission"].log_softmax(-1)  # (states, symbols)
    alpha = log_initial + log_emission[:, x[:, 0]].T  # (sequences, states)
    for t in range(1, x.shape[1]):
        alpha = matmul(alpha, log_transition) + log_emission[:, x[:, t]].T
    return alpha.logsumexp(-1)


def ringmm_log_plus(a, b):
    return ringmm.torch.matmul(a, b, "log_plus")


def torch_log_plus(a, b):
    """The same product written with torch alone: broadcast, then logsumexp over k."""
    return (a[:, :, None] + b[None, :, :]).logsumexp(1)


def random_hmm(states, symbols, generator, dtype, device):
    """Sticky transitions and peaked emissions, so that the states leave a trace in the data."""
    def logits(*shape, scale):
        return (torch.randn(*shape, generator=generator, dtype=dtype) * scale).to(device)

    transition = logits(states, states, scale=1.0) + 3 * torch.eye(states, dtype=dtype, device=device)
    emission = logits(states, symbols, scale=2.5)
    return {"initial": logits(states, scale=1.0), "transition": transition, "emission": emission}


def sample(logits, sequences, length, generator):
    """Symbol sequences (sequences × length, int64) drawn from the HMM."""
    device = logits["initial"].device
    probs = {name: value.softmax(-1).cpu() for name, value in logits.items()}
    state = torch.multinomial(probs["initial"].expand(sequences, -1), 1, generator=generator)[:, 0]
    symbols = []
    for _ in range(length):
        symbols.append(torch.multinomial(probs["emission"][state], 1, generator=generator)[:, 0])
        state = torch.multinomial(probs["transition"][state], 1, generator=generator)[:, 0]
    return torch.stack(symbols, 1).to(device)


def train(states=16, symbols=32, length=64, sequences=256, steps=150, device="cpu", dtype=torch.float32, seed=0):
    """Fits a fresh HMM to samples of a random one; returns the negative log-likelihoods per symbol
    of the data under the true model, the untrained model and the trained one."""
    generator = torch.Generator().manual_seed(seed)
    truth = random_hmm(states, symbols, generator, dtype, device)
    x = sample(truth, sequences, length, generator)
    model = {name: (0.1 * value).detach().clone().requires_grad_()
             for name, value in random_hmm(states, symbols, generator, dtype, device).items()}
    optimiser = torch.optim.Adam(model.values(), lr=0.05)

    def nll(logits):
        return -log_likelihood(logits, x, ringmm_log_plus).mean() / length

    initial = nll(model).item()
    for step in range(steps):
        optimiser.zero_grad()
        loss = nll(model)
        loss.backward()
        optimiser.step()
        if step % 25 == 0:
            print(f"step {step:4d}: negative log-likelihood {loss.item():.4f} nats/symbol")
    with torch.no_grad():
        return {"true": nll(truth).item(), "initial": initial, "trained": nll(model).item()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=16)
    parser.add_argument("--symbols", type=int, default=32)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--sequences", type=int, default=256)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() and ringmm.info()["cuda_devices"]
                        else "cpu")
    args = parser.parse_args(argv)
    result = train(args.states, args.symbols, args.length, args.sequences, args.steps, args.device)
    print(f"negative log-likelihood per symbol: untrained {result['initial']:.4f}, trained {result['trained']:.4f}, "
          f"the true model {result['true']:.4f}")
    return result


if __name__ == "__main__":
    main()
