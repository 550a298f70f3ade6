#!/usr/bin/env python3
"""Import cycles among the top-level modules of a crate's src/ (by their `crate::` paths):
prints each strongly connected set of two or more; `[]` is none. Usage: import-cycles.py ROOT."""
import os,re,sys
root=sys.argv[1]+'/src'
g={}
for e in os.listdir(root):
    n=e[:-3] if e.endswith('.rs') else e
    if n=='main': continue
    p=os.path.join(root,e)
    txt=''
    if os.path.isdir(p):
        for d,_,fs in os.walk(p):
            for f in fs:
                if f.endswith('.rs'): txt+=open(os.path.join(d,f)).read()
    else: txt=open(p).read()
    g[n]=set(re.findall(r'crate::([a-z_]+)',txt))-{n}
# strongly connected components
idx={};low={};st=[];on=set();out=[];c=[0]
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in g.get(v,()):
        if w not in g: continue
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: out.append(sorted(comp))
for v in g:
    if v not in idx: sc(v)
print(out)
