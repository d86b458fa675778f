import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import sys; sys.path.insert(0, _os.path.join(_DATA, "queries"))
from common import org_meta, write
ROOT = _os.path.join(_SHARED, "braindump")
# The 90 notes of `python3 sample.py braindump 90 --seed 41 --exclude braindump.json`, in
# that order; kinds cycle paraphrase, keyword, question. A fourth field is the :ID: of the
# heading whose section answers (else the file's top :ID: is the target).
Q = [
 ("reference/rover.org", "paraphrase", "red planet wheeled explorer touchdown and staying warm"),
 ("reference/git_scalar.org", "keyword", "scalar sparse checkout fsmonitor"),
 ("reference/running.org", "question", "how many steps per minute should my running cadence be"),
 ("reference/music_theory.org", "paraphrase", "which extra pitch turns a plain triad into a tetrad"),
 ("reference/multimodal_alignment.org", "keyword", "explicit implicit alignment modalities"),
 ("reference/rss_2020_early_career_award_keynote_q_a_luca_carlone_youtube.org", "question", "what did luca carlone say about turning non-convex problems into convex ones"),
 ("main/plain_text_is_not_enough.org", "paraphrase", "doubts that a personal wiki can exist in unformatted files"),
 ("reference/andrychowicz2017_hindsight_experience_replay.org", "keyword", "hindsight replay sparse rewards"),
 ("reference/synaptic_current_model.org", "question", "how can a leaky integrate-and-fire neuron be simulated as a recurrent network"),
 ("reference/gcc.org", "paraphrase", "what goes on inside the standard linux toolchain"),
 ("reference/parameter_servers.org", "keyword", "parameter server all-reduce gradients"),
 ("reference/google_cloud_platform.org", "question", "in cloud ml engine distributed training, what do the master and worker replicas do"),
 ("reference/markovian_assumption.org", "paraphrase", "how the memoryless premise fails in real robots"),
 ("reference/cmake.org", "keyword", "cmakelists out-of-source build"),
 ("reference/alonso_current_2019.org", "question", "how do traditional bin picking systems match point clouds to cad models", "7267eb56-6fdd-4646-8531-f34b30f66d86"),
 ("reference/ising_models.org", "paraphrase", "grid of tiny magnets preferring to match those beside them"),
 ("reference/structuring_a_document_with_the_scqa_format.org", "keyword", "scqa situation complication question"),
 ("reference/ssnlp.org", "question", "how does alibaba handle chinese word segmentation with little annotated data"),
 ("reference/dl_tools.org", "paraphrase", "cheat sheet for tf1 and its friendlier wrapper"),
 ("reference/reinforcement_learning.org", "keyword", "glie exploration function"),
 ("reference/hierarchical_models.org", "question", "how do you construct a hierarchical prior in bayesian statistics"),
 ("reference/learning_songs_by_ear.org", "paraphrase", "transcribing tunes without tabs just by listening"),
 ("reference/coding_interview_cheatsheet.org", "keyword", "dutch flag partition"),
 ("reference/principles_of_effective_research_michael_nielsen.org", "question", "what is the difference between a problem-solver and a problem-creator in research"),
 ("reference/coding_interview.org", "paraphrase", "getting ready for whiteboard rounds when job hunting as developer"),
 ("reference/the_hidden_life_of_trees_what_they_feel_how_they_communicate.org", "keyword", "wohlleben trees communicate"),
 ("reference/the_cost_of_context_switching.org", "question", "why is minimizing context switching so important for productivity"),
 ("reference/expectation_maximization.org", "paraphrase", "alternately guessing hidden memberships and refitting bell-curve blends"),
 ("reference/double_entry_accounting.org", "keyword", "assets liabilities net worth"),
 ("reference/optionality.org", "question", "what does richard meadows mean by acting dead when being frugal"),
 ("reference/1903_00138_improving_grammatical_error_correction_via_pre_training_a_copy_augmented_architecture_with_unlabeled_data.org", "paraphrase", "automatically repairing flawed english prose mostly by duplicating it"),
 ("reference/occupancy_grid_mapping.org", "keyword", "inverse sensor model log-odds"),
 ("reference/dabney2020_distributional_rl.org", "question", "do dopamine neurons encode a distribution over future rewards rather than a single value"),
 ("reference/statistical_learning.org", "paraphrase", "digest of the islr book's opening material"),
 ("reference/attention_allocation_in_open_source.org", "keyword", "homebrew tiered contributors"),
 ("reference/game_api_design.org", "question", "what makes a c library easy to build and integrate into a game"),
 ("reference/ignore_what_everyone_else_is_doing.org", "paraphrase", "why comparing yourself with competitors derails your aims"),
 ("reference/concept_grounding.org", "keyword", "grounding linguistic representations"),
 ("reference/cartographer.org", "question", "how does google cartographer handle loop closure with submaps"),
 ("reference/prediction_is_the_essence_of_intelligence.org", "paraphrase", "forecasting upcoming sensory input as the root of smarts"),
 ("main/what_i_m_doing_now.org", "keyword", "digital garden pruning org-roam"),
 ("reference/pomdp.org", "question", "how does an agent update its belief state in a partially observable mdp"),
 ("reference/podcasts.org", "paraphrase", "audio shows worth subscribing to"),
 ("reference/lottery_ticket_hypothesis.org", "keyword", "iterative magnitude pruning subnetwork"),
 ("reference/stochastic_processes.org", "question", "what is the gambler's ruin example of a stochastic process"),
 ("reference/human_behaviour_as_optimal_control.org", "paraphrase", "do people move as if solving for some payoff"),
 ("reference/dynamic_time_warping.org", "keyword", "dtw similarity measure sequences"),
 ("reference/the_distressed_debt_cycle.org", "question", "why do distressed debt investors buy bonds of companies heading into bankruptcy"),
 ("reference/bittorrent.org", "paraphrase", "how swarm p2p sharing rewards reciprocity among leechers"),
 ("reference/common_statistical_tests_are_linear_models.org", "keyword", "parametric tests rank space"),
 ("reference/beam_search_promotes_uniform_information_density.org", "question", "why does beam search produce better text than exact search"),
 ("reference/metropolis_hastings.org", "paraphrase", "markov chain sampler keeping or discarding candidate jumps"),
 ("reference/feeds.org", "keyword", "elfeed rss feeds"),
 ("reference/mixed_precision_training.org", "question", "why train neural networks in half precision on tensor cores"),
 ("reference/actor_critic.org", "paraphrase", "pairing a learner with a learned judge for steadier progress"),
 ("main/interval_ear_training.org", "keyword", "ear training happy birthday"),
 ("reference/css.org", "question", "are there good utility-first css frameworks like tailwind"),
 ("reference/slam.org", "paraphrase", "rover sketching its surroundings and pinpointing its whereabouts at once"),
 ("reference/recommender_systems.org", "keyword", "recsys weak baselines itemknn", "e0b936d9-c24a-47d5-9c6e-ab469f9c8f43"),
 ("reference/antifragile_ideas.org", "question", "what is john carmack's approach of trying to defeat an idea immediately"),
 ("reference/reference_prior.org", "paraphrase", "objective default beliefs robust to relabelling the unknown quantity"),
 ("reference/programming_methodology.org", "keyword", "metacircular interpreter thunking"),
 ("reference/causality_part_1_bernhard_scholkopf_mlss_2020_tubingen_youtube.org", "question", "what conditions must a structural causal model satisfy", "7641ec39-6e89-4505-9363-d365b446a20a"),
 ("reference/policy_gradients.org", "paraphrase", "directly climbing the payoff of a stochastic controller"),
 ("reference/range_finder_model.org", "keyword", "beam model range finder"),
 ("reference/cognitive_hierarchy_model.org", "question", "how many steps of thinking do players do in keynes beauty contest game"),
 ("reference/information_filter.org", "paraphrase", "kalman variant tracking the reciprocal of spread"),
 ("reference/react.org", "keyword", "react frameworks ant design"),
 ("reference/robot_kinematics.org", "question", "why are odometry motion models more accurate than velocity models"),
 ("reference/the_real_estate_cycle.org", "paraphrase", "housing booms and busts due to slow construction"),
 ("reference/information_theory.org", "keyword", "hamming code syndrome decoding"),
 ("reference/trigger_list.org", "question", "what checklist can i use to recall open loops and commitments"),
 ("reference/emacs_should_be_emacs_lisp.org", "paraphrase", "rewriting the text editor's core in its own extension language"),
 ("reference/java.org", "keyword", "priorityqueue add offer"),
 ("reference/high_performance_natural_language_processing.org", "question", "how can you speed up transformer nlp models for production"),
 ("reference/lars_optimizer.org", "paraphrase", "step-size trick that lets gigantic minibatches still converge"),
 ("reference/regression.org", "keyword", "variance inflation factor collinearity"),
 ("reference/sentences_should_branch_to_the_right.org", "question", "where should the verb go in a sentence for clarity"),
 ("reference/presentations.org", "paraphrase", "crafting slide decks that grip listeners"),
 ("reference/mnih2013_atari_deeprl.org", "keyword", "dqn target network atari"),
 ("reference/devops.org", "question", "is kubernetes worth it for small personal side projects"),
 ("reference/pruning_neural_networks.org", "paraphrase", "trimming connections from trained nets to shrink them"),
 ("reference/engineering_career.org", "keyword", "dropbox engineering career framework"),
 ("reference/how_to_be_a_good_forecaster.org", "question", "what are tetlock's ten commandments for superforecasters"),
 ("reference/random_walks_in_finance.org", "paraphrase", "origins of the idea that stocks wander unpredictably"),
 ("reference/getting_things_done.org", "keyword", "gtd org-mode workflow"),
 ("reference/options_finance.org", "question", "what is the difference between a call option and a put option"),
 ("reference/how_to_brainstorm_great_business_ideas.org", "paraphrase", "picking a lucrative startup concept before writing code"),
 ("reference/fitness.org", "keyword", "upper crossed syndrome posture", "4e31cb8d-f49c-4131-9a07-8e6dce8860d3"),
 ("reference/jeffreys_prior.org", "question", "how is the jeffreys prior computed from the fisher information"),
]
# other nodes that answer a query as directly as its target: (file, heading :ID: or None)
ALSO = {
 "reference/coding_interview.org": [("reference/coding_interview_cheatsheet.org", None)],
 "reference/robot_kinematics.org": [("reference/odometry_motion_model.org", None)],
 "reference/mnih2013_atari_deeprl.org": [("reference/q_learning.org", None)],
 "reference/high_performance_natural_language_processing.org": [("reference/transformer_models.org", "cb299df5-e052-4a8a-b885-9f749c7d6222")],
}
# offtopic: (offtopic_kind, query); each subject's key terms were searched with grep -ril
# over the corpus and the subject replaced when any note covered it
OFF = [
 ("near", "how does the fast inverse square root trick from quake work"),
 ("near", "what is a skip list and how does searching one work"),
 ("near", "goroutines and channels in go, how do they work"),
 ("near", "what do grid cells in the entorhinal cortex encode"),
 ("near", "what does the hairy ball theorem say"),
 ("near", "What role do the basal ganglia play in choosing which action to take?"),
 ("near", "eisenhower matrix urgent vs important"),
 ("near", "How does an isolation forest detect anomalies?"),
 ("near", "what is persistent homology in topological data analysis"),
 ("near", "why does warp divergence slow down cuda kernels"),
 ("near", "linux oom killer, how does it pick which process to kill"),
 ("near", "what do mirror neurons in the premotor cortex respond to"),
 ("near", "what is church encoding in the lambda calculus"),
 ("near", "can benford's law really be used to catch accounting fraud"),
 ("near", "how does the qr algorithm find the eigenvalues of a matrix"),
 ("everyday", "how long should i boil an egg for a runny yolk"),
 ("everyday", "best way to get red wine out of a carpet"),
 ("everyday", "how often should I water a snake plant"),
 ("everyday", "can dogs eat grapes"),
 ("everyday", "my kitchen faucet keeps dripping, how do i fix it"),
 ("everyday", "what is the offside rule in football"),
 ("everyday", "how do I get my cat to stop scratching the couch"),
 ("everyday", "how much sun do tomatoes in pots on a balcony need"),
 ("everyday", "how do i change a flat tire on the highway"),
 ("everyday", "is it really cheaper to book flights on a tuesday"),
 ("everyday", "how much should you tip a taxi driver in japan"),
 ("everyday", "how do i bleed a radiator"),
 ("everyday", "whats a good feeding schedule for a sourdough starter"),
 ("everyday", "how to patch a small hole in drywall before painting"),
 ("everyday", "how many months of expenses should i keep in an emergency fund"),
]
qs = []
for item in Q:
    f, kind, q = item[:3]
    hid = item[3] if len(item) > 3 else None
    e = {"query": q, "kind": kind, "target": org_meta(ROOT, f, hid)}
    if f in ALSO: e["also"] = [org_meta(ROOT, g, h) for g, h in ALSO[f]]
    qs.append(e)
for k, q in OFF:
    qs.append({"query": q, "kind": "offtopic", "offtopic_kind": k, "target": None})
write(_os.path.join(_DATA, "braindump_fit.json"),
      "Retrieval evaluation queries for the braindump org-roam corpus, a second set on 90 notes sampled with seed 41 that braindump.json does not use (neither as target nor in also), written by a reader who never ran the search tool. Targets name the node (file top :ID: or a heading's own :ID:) that answers each query; offtopic queries have no answer in the corpus, offtopic_kind near (subjects near the corpus's own) or everyday (everyday-life questions).",
      "braindump", qs)
print(len(qs))
