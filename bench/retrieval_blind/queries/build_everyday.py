import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
import sys; sys.path.insert(0, _os.path.join(_DATA, "queries"))
from common import write
# Everyday-life questions a person might ask an assistant, 10 a corpus, different for each
# corpus. Each question's key terms were searched with grep -ril over that corpus (braindump:
# ../shared/corpora/braindump; adr: ../shared/corpora/adr *.md; manual: notes/*.org of this
# repository; literate: ../shared/corpora/literate) and the subject replaced when any note
# covered it, even in passing.
EVERYDAY = {
 "braindump": [
  "how do i get rid of fruit flies in the kitchen",
  "difference between baking soda and baking powder",
  "how do you fold a fitted sheet",
  "how can i teach my puppy to walk nicely on a leash",
  "how long does cooked rice keep in the fridge",
  "composting food scraps in a small apartment",
  "how do tiebreaks work in tennis",
  "how to get chewing gum out of a child's hair",
  "when is the right time to prune rose bushes",
  "how do i remove rust from a cast iron skillet",
 ],
 "adr": [
  "how long should i roast a whole chicken for",
  "what vaccinations does a new kitten need",
  "how do i stop my glasses fogging up in winter",
  "how can i keep basil alive on a windowsill",
  "how do i jump start a car with a dead battery",
  "what's the best way to sharpen a kitchen knife",
  "getting rid of black mould in shower grout",
  "how much hand luggage can i take on a budget airline",
  "how do i teach my kid to ride a bike without stabilisers",
  "how does scoring work in ten-pin bowling",
 ],
 "manual": [
  "how do i hang a heavy mirror on a plaster wall",
  "how long should chicken thighs marinate",
  "how do i keep deer out of my vegetable patch",
  "best way to freeze fresh strawberries",
  "how do you descale a kettle",
  "my washing machine smells musty, how do i clean it",
  "what do i need to fly with my cat in the cabin",
  "how do i stop floorboards from squeaking",
  "what is a golf handicap and how is it worked out",
  "how do i get candle wax out of a tablecloth",
 ],
 "literate": [
  "how do i make cold brew coffee at home",
  "cheap ways to lower my heating bill this winter",
  "how often should i change my car's engine oil",
  "what is lbw in cricket",
  "how can i get my toddler to sleep through the night",
  "recipe for fluffy pancakes from scratch",
  "how should roommates split the utility bills fairly",
  "how do i get rid of aphids on my pepper plants",
  "my dog ate some chocolate, what should i do",
  "how to unclog a bathtub drain without harsh chemicals",
 ],
}
for corpus, questions in EVERYDAY.items():
    qs = [{"query": q, "kind": "offtopic", "offtopic_kind": "everyday", "target": None} for q in questions]
    write(_os.path.join(_DATA, corpus + "_everyday.json"),
          "Everyday-life questions (cooking, home repair, travel, sports, pets, gardening, personal finance...) that no note of the %s corpus answers, written by a reader who never ran the search tool; kind offtopic, offtopic_kind everyday, target null." % corpus,
          corpus, qs)
    print(corpus, len(qs))
