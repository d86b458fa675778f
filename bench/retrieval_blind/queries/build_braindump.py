import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import sys; sys.path.insert(0, _os.path.join(_DATA, "queries"))
from common import org_meta, write
ROOT = _os.path.join(_SHARED, "braindump")
R = "reference/"
Q = [
 ("config_management", "paraphrase", "keeping shell settings synchronized across several computers"),
 ("python_packaging", "keyword", "sdist wheel auditwheel"),
 ("neural_ode", "question", "how are gradients computed through an ode solver without huge memory cost"),
 ("crossmodal_hashing", "paraphrase", "squeezing pictures and captions into tiny fingerprints for lookup"),
 ("you_and_your_research", "keyword", "hamming luck prepared mind"),
 ("spike_train_metrics", "question", "how do you measure the distance between two neuron firing sequences"),
 ("anthony_deden", "paraphrase", "investor musings on wealth preservation and self-reliance"),
 ("basic_indexing_vs_advanced_indexing_in_numpy", "keyword", "numpy advanced indexing copy"),
 ("designing_dataintensive_applications", "question", "are lsm trees or b-trees better for write heavy workloads"),
 ("td_learning", "paraphrase", "bootstrapping worth predictions from successive rewards"),
 ("rademacher", "keyword", "rademacher complexity generalization bounds"),
 ("critical_thinking", "question", "what is the difference between a priori and a posteriori reasoning"),
 ("point_estimation_bayesian", "paraphrase", "collapsing beliefs about unknowns into one representative number"),
 ("spiking_software", "keyword", "bindsnet norse brian"),
 ("spiking_neurons_lit_review", "question", "what are the three generations of neural network models"),
 ("rejection_sampling", "paraphrase", "drawing from an intractable target using an envelope"),
 ("deep_learning", "keyword", "visenze visual embeddings"),
 ("variational_inference", "question", "which papers combine variational methods with mcmc"),
 ("work_clean", "paraphrase", "restaurant cooks' discipline for tidy desks and schedules"),
 ("docker", "keyword", "dockerfile cheatsheet entrypoint"),
 ("self_supervised_learning", "question", "how does self-supervised learning differ from reinforcement learning in the amount of feedback", "03a42dc2-7489-4509-a478-cd1c002c53bd"),
 ("inductive_bias", "paraphrase", "baked-in assumptions that help a model generalize"),
 ("probability_theory", "keyword", "conditional expectation sample space"),
 ("progressive_summarization", "question", "what are the layers of progressive summarization for notes"),
 ("mcts", "paraphrase", "choosing each turn via stochastic rollouts instead of exhaustive lookahead"),
 ("model_based_rl", "keyword", "distributional shift dynamics model"),
 ("interval_estimation_bayesian", "question", "how is a bayesian credible set different from a frequentist confidence interval"),
 ("free_energy_rl", "paraphrase", "boltzmann machines estimating payoffs for agent decisions"),
 ("feedback_alignment_random_error_bp", "keyword", "feedback alignment random matrix"),
 ("markov_logic_networks", "question", "how do markov logic networks soften the hard constraints of first-order logic"),
 ("robot_localization", "paraphrase", "working out where a rover sits on a floor plan"),
 ("information_bottleneck_dnn", "keyword", "tishby information bottleneck compression"),
 ("zeigarnik_effect", "question", "why do unfinished tasks stick in memory better than finished ones"),
 ("learning_how_to_do_hard_things", "paraphrase", "mastering tough skills by isolating one tricky facet"),
 ("comsa2019_temp_coding", "keyword", "alpha synaptic temporal coding"),
 ("gaussian_processes", "question", "how can you put a prior over functions in supervised learning"),
 ("nix", "paraphrase", "declarative reproducible distro and its ecosystem tools"),
 ("i-diagrams", "keyword", "information diagram sets"),
 ("optimization", "question", "why is it worth formulating a problem as a convex optimization problem"),
 ("statistical_mechanics_in_financial_markets", "paraphrase", "thermodynamics-style modeling of algorithmic stock exchanges"),
 ("byron_boots_perspectives_on_machine_learning_and_robotics", "keyword", "online learning predictive control", "9a6d9b02-1efe-487c-bba7-8cabe0dc556f"),
 ("writing_books", "question", "any advice for someone planning to write a technical book"),
 ("hoDetectingCharacterizingLateral2019", "paraphrase", "spotting hijacked inboxes spreading scams to colleagues"),
 ("stix", "keyword", "stix threat intelligence"),
 ("computer_organization", "question", "what are the five stages of a pipelined cpu datapath"),
 ("zador19_critique_pure_learning", "paraphrase", "why heredity cannot spell out each synapse"),
 ("gpipe", "keyword", "pipeline parallelism micro batches"),
 ("singapore_to_sf_migration_guide", "question", "what do i need to open a bank account after moving to the us"),
 ("bayesian_deep_learning", "paraphrase", "treating net weights probabilistically and why flat valleys help"),
 ("multi_modal_fusion", "keyword", "early fusion late fusion"),
 ("copying_better_how_to_acquire_the_tacit_knowledge_of_experts", "question", "how do you extract the intuition that experts can't put into words"),
 ("inverse_rl", "paraphrase", "recovering the hidden incentive behind demonstrations"),
 ("the_learning_problem", "keyword", "active passive learner"),
 ("wisdom", "question", "what did naval ravikant say about retirement and getting rich"),
 ("contrastive_methods", "paraphrase", "pulling matched pairs together and pushing mismatched pairs apart"),
 ("ger1000", "keyword", "confounders double blind"),
 ("roam_research", "question", "who created roam research and what note method does it borrow from"),
 ("writing", "paraphrase", "reading list for becoming a better author"),
 ("para_method", "keyword", "para tiago forte"),
 ("the_fermi_estimate", "question", "how would you estimate how many piano tuners work in a city"),
]
OFF = [
 "how does paxos reach consensus when a replica crashes",
 "how much of my bankroll should i stake according to the kelly criterion",
 "how do i set up a wireguard tunnel between two servers",
 "how do shapley values attribute a prediction to individual features",
 "does the pomodoro technique of short timed sprints improve focus",
 "how do rotary position embeddings work in transformers",
 "how does smote oversampling deal with imbalanced classes",
 "how do diffusion models generate images starting from pure noise",
 "how does kerberos ticket granting authentication work",
 "what does the stoic dichotomy of control say about worry",
 "how does a mixture of experts layer route tokens to experts",
 "how do i write a systemd unit that restarts a crashed service",
 "how do zfs snapshots and send receive backups work",
 "how does huffman coding build an optimal prefix code",
 "how do i protect a web app against sql injection",
 "how does the oauth authorization code flow with pkce work",
 "why does layer normalization stabilise transformer training",
 "how do graph neural networks pass messages between neighbouring nodes",
 "how does bayesian optimization pick the next hyperparameters to try",
 "how do i write an ansible playbook to provision servers",
]
ALSO = {"writing": ["writing_books"]}
qs = []
for item in Q:
    f, kind, q = item[:3]
    hid = item[3] if len(item) > 3 else None
    e = {"query": q, "kind": kind, "target": org_meta(ROOT, R + f + ".org", hid)}
    if f in ALSO: e["also"] = [org_meta(ROOT, R + g + ".org") for g in ALSO[f]]
    qs.append(e)
for q in OFF:
    qs.append({"query": q, "kind": "offtopic", "target": None})
write(_os.path.join(_DATA, "braindump.json"),
      "Retrieval evaluation queries for the braindump org-roam corpus, written by a reader who never ran the search tool. Targets name the node (file top :ID: or a heading's own :ID:) that answers each query; offtopic queries have no answer in the corpus.",
      "braindump", qs)
print(len(qs))
